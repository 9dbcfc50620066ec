import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Data requests

extension Session {
    /// Creates a `DataRequest` from a `URLRequest` created using the passed components and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Parameters` (a.k.a. `[String: Any]`) value to be encoded into the `URLRequest`.
    ///                                `nil` by default.
    ///   - encoding:                  `ParameterEncoding` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncoding.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `DataRequest`.
    public func request(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataRequest` from a `URLRequest` created using the passed components, `Encodable` parameters, and a
    /// `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                   `ParameterEncoder` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `DataRequest`.
    public func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataRequest` from a `URLRequestConvertible` value and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    /// - Returns:                     The created `DataRequest`.
    public func request(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        prepare(
            DataRequest(
                convertible: convertible, underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, session: self))
    }
}

/// The `URLRequest` of `session.request(_:method:parameters:encoder:...)`.
struct RequestEncodableConvertible<Parameters: Encodable & Sendable>: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: Parameters?
    let encoder: any ParameterEncoder
    let headers: HTTPHeaders?
    let requestModifier: Session.RequestModifier?

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try parameters.map { try encoder.encode($0, into: request) } ?? request
    }
}

/// The `URLRequest` of `session.request(_:method:parameters:encoding:...)`. The parameters are
/// copied at the call and only read afterwards.
struct RequestConvertible: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: UncheckedSendable<Parameters?>
    let encoding: any ParameterEncoding
    let headers: HTTPHeaders?
    let requestModifier: Session.RequestModifier?

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try encoding.encode(request, with: parameters.value)
    }
}
