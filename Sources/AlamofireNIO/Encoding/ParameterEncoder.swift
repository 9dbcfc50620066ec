#if canImport(FoundationNetworking)
public import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Encodes `Encodable` parameters into a `URLRequest`.
public protocol ParameterEncoder: Sendable {
    /// The request with `parameters` encoded into it; nil parameters leave it as it is.
    /// - Throws: an ``AFError``: `parameterEncoderFailed` (a form encoder, a missing URL or method) or
    ///   `parameterEncodingFailed(.jsonEncodingFailed)` (the JSON encoder), as in Alamofire.
    func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest
}

/// Encodes parameters as a JSON body, with `Content-Type: application/json` unless one is set.
open class JSONParameterEncoder: @unchecked Sendable, ParameterEncoder {
    /// A `JSONEncoder` with default settings.
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }

    /// Pretty-printed JSON.
    public static var prettyPrinted: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return JSONParameterEncoder(encoder: encoder)
    }

    /// JSON with sorted keys.
    public static var sortedKeys: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return JSONParameterEncoder(encoder: encoder)
    }

    /// The encoder used. (`JSONEncoder` is not `Sendable`: configure it before sharing the parameter encoder.)
    public let encoder: JSONEncoder

    /// Creates an encoder that writes parameters as JSON with `encoder`.
    ///
    /// - Parameter encoder: the `JSONEncoder` to use.
    public init(encoder: JSONEncoder = JSONEncoder()) {
        self.encoder = encoder
    }

    /// Returns `request` with `parameters` encoded as its JSON body; `nil` parameters leave the request as it is.
    ///
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))`, as in Alamofire.
    open func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        do {
            request.httpBody = try encoder.encode(parameters)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        if request.headers["Content-Type"] == nil {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

/// Encodes parameters as `application/x-www-form-urlencoded` text, into the query or the body.
open class URLEncodedFormParameterEncoder: @unchecked Sendable, ParameterEncoder {
    /// Where the encoded parameters go.
    public enum Destination: Sendable {
        /// The query for GET, HEAD and DELETE; the body for every other method.
        case methodDependent
        /// Always the query, appended to any query the URL has.
        case queryString
        /// Always the body, with `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless one is set.
        case httpBody

        func encodesParametersInURL(for method: HTTPMethod) -> Bool {
            switch self {
            case .methodDependent: [.get, .head, .delete].contains(method)
            case .queryString: true
            case .httpBody: false
            }
        }
    }

    /// The default encoder, sending parameters where the method says.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// The form encoder used.
    public let encoder: URLEncodedFormEncoder
    /// Where the parameters go.
    public let destination: Destination

    /// Creates an encoder that writes parameters as a form with `encoder`, into the query or body as `destination` says.
    ///
    /// - Parameters:
    ///   - encoder: the form encoder to use.
    ///   - destination: where the parameters go.
    @preconcurrency public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Returns `request` with `parameters` form-encoded into its query or its body; `nil` parameters leave it as it is.
    ///
    /// - Throws: ``AFError/parameterEncoderFailed(reason:)`` when the request has no URL or method, or the form encoder
    ///   fails.
    open func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        guard let url = request.url else { throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url)) }
        guard let method = request.method else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.httpMethod(rawValue: request.httpMethod ?? "nil")))
        }
        do {
            if destination.encodesParametersInURL(for: method), var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
                let query: String = try encoder.encode(parameters)
                let combined = [components.percentEncodedQuery, query].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "&")
                components.percentEncodedQuery = combined.isEmpty ? nil : combined
                guard let newURL = components.url else {
                    throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
                }
                request.url = newURL
            } else {
                if request.headers["Content-Type"] == nil {
                    request.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
                }
                request.httpBody = try encoder.encode(parameters)
            }
        } catch let error as AFError {
            throw error
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        return request
    }
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// `JSONParameterEncoder.default`.
    public static var json: JSONParameterEncoder { .default }

    /// A `JSONParameterEncoder` with the given `JSONEncoder`.
    public static func json(encoder: JSONEncoder = JSONEncoder()) -> JSONParameterEncoder {
        JSONParameterEncoder(encoder: encoder)
    }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// `URLEncodedFormParameterEncoder.default`.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { .default }

    /// A `URLEncodedFormParameterEncoder` with the given encoder and destination.
    @preconcurrency public static func urlEncodedForm(
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        destination: URLEncodedFormParameterEncoder.Destination = .methodDependent
    ) -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}
