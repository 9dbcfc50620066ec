import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Fails the request unless its status code is in `acceptableStatusCodes`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        validate { _, response, _ in ResponseValidation.statusCode(response, acceptable: acceptableStatusCodes) }
    }

    /// Fails the request unless its `Content-Type` matches one of `acceptableContentTypes` (`*/*`,
    /// `text/*` wildcards allowed). An empty body passes.
    @discardableResult
    @preconcurrency public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @autoclosure @Sendable () -> S
    ) -> Self
    where S.Element == String {
        validate { _, response, data in
            ResponseValidation.contentType(response, bodyIsEmpty: data?.isEmpty ?? true, acceptable: Array(acceptableContentTypes()))
        }
    }

    /// Requires a 2xx status and a `Content-Type` the request's `Accept` header allows.
    @discardableResult
    public func validate() -> Self {
        // Unowned: the validator is kept by the request, which runs it.
        let acceptableContentTypes: @Sendable () -> [String] = { [unowned self] in self.acceptableContentTypes }
        return validate(statusCode: 200..<300).validate(contentType: acceptableContentTypes())
    }
}

extension DataStreamRequest {
    /// Fails the request unless its status code is in `acceptableStatusCodes`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        validate { _, response in ResponseValidation.statusCode(response, acceptable: acceptableStatusCodes) }
    }

    /// Fails the request unless its `Content-Type` matches one of `acceptableContentTypes` (`*/*`,
    /// `text/*` wildcards allowed). A stream has no collected body, so the type is always checked.
    @discardableResult
    @preconcurrency public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @autoclosure @Sendable () -> S
    ) -> Self
    where S.Element == String {
        validate { _, response in
            ResponseValidation.contentType(response, bodyIsEmpty: false, acceptable: Array(acceptableContentTypes()))
        }
    }

    /// Requires a 2xx status and a `Content-Type` the request's `Accept` header allows.
    @discardableResult
    public func validate() -> Self {
        let acceptableContentTypes: @Sendable () -> [String] = { [unowned self] in self.acceptableContentTypes }
        return validate(statusCode: 200..<300).validate(contentType: acceptableContentTypes())
    }
}

extension Request {
    /// What the request's `Accept` header allows (`*/*` without one), for `validate()`.
    var acceptableContentTypes: [String] {
        request?.value(forHTTPHeaderField: "Accept")?.components(separatedBy: ",") ?? ["*/*"]
    }
}

enum ResponseValidation {
    static func statusCode(_ response: HTTPURLResponse, acceptable: some Sequence<Int>) -> Request.ValidationResult {
        if acceptable.contains(response.statusCode) { return .success(()) }
        return .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
    }

    static func contentType(_ response: HTTPURLResponse, bodyIsEmpty: Bool, acceptable: [String]) -> Request.ValidationResult {
        guard !bodyIsEmpty else { return .success(()) }
        guard let contentType = response.mimeType ?? response.value(forHTTPHeaderField: "Content-Type").map(mediaType),
            let responseType = MIMEType(contentType)
        else {
            if acceptable.contains(where: { MIMEType($0)?.isWildcard == true }) { return .success(()) }
            return .failure(AFError.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: acceptable.sorted())))
        }
        if acceptable.contains(where: { MIMEType($0)?.matches(responseType) == true }) { return .success(()) }
        return .failure(
            AFError.responseValidationFailed(
                reason: .unacceptableContentType(acceptableContentTypes: acceptable.sorted(), responseContentType: contentType)))
    }

    private static func mediaType(_ header: String) -> String {
        header.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? header
    }
}

/// A `type/subtype` pair, either part possibly `*`.
struct MIMEType {
    let type: String
    let subtype: String

    var isWildcard: Bool { type == "*" && subtype == "*" }

    init?(_ string: String) {
        let stripped = string.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let parts = stripped.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        type = parts[0].lowercased()
        subtype = parts[1].lowercased()
    }

    func matches(_ other: MIMEType) -> Bool {
        (type == "*" || type == other.type) && (subtype == "*" || subtype == other.subtype)
    }
}
