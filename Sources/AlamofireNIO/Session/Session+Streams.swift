import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Data stream requests

extension Session {
    /// Creates a `DataStreamRequest` from the passed components, `Encodable` parameters, and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                       `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                          `ParameterEncoder` to be used to encode the `parameters` value into the
    ///                                       `URLRequest`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` which will be applied to the `URLRequest` created from
    ///                                       the provided parameters. `nil` by default.
    /// - Returns:                            The created `DataStreamRequest`.
    public func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return streamRequest(
            convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from the passed components and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` which will be applied to the `URLRequest` created from
    ///                                       the provided parameters. `nil` by default.
    /// - Returns:                            The created `DataStreamRequest`.
    public func streamRequest(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let convertible = RequestEncodableConvertible<Empty>(
            url: convertible, method: method, parameters: nil, encoder: URLEncodedFormParameterEncoder.default, headers: headers,
            requestModifier: requestModifier)
        return streamRequest(
            convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from the passed `URLRequestConvertible` value and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    /// - Returns:                            The created `DataStreamRequest`.
    public func streamRequest(
        _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataStreamRequest {
        prepare(
            DataStreamRequest(
                convertible: convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, underlyingQueue: rootQueue,
                serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
                shouldAutomaticallyResume: shouldAutomaticallyResume, session: self))
    }
}
