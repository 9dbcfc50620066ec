import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The `URLRequest`s the request factories build. The factories themselves stay in `Session`'s body:
// they are `open`, and a declaration in an extension cannot be overridden.

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
