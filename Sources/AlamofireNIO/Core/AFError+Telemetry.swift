#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AFError {
    /// A short, low-cardinality name for the error, for telemetry's `error.type` (AlamofireNIO's, not
    /// Alamofire's): a failed task's `URLError` code (`URLError.-1001` for a timeout), else the
    /// case's name (`responseValidationFailed`, `explicitlyCancelled`, `sessionDeinitialized`…).
    public var telemetryErrorType: String {
        if case .sessionTaskFailed(let underlying as URLError) = self { return "URLError.\(underlying.code.rawValue)" }
        if isExplicitlyCancelledError { return "explicitlyCancelled" }
        if isSessionDeinitializedError { return "sessionDeinitialized" }
        return Mirror(reflecting: self).children.first?.label ?? "AFError"
    }
}

extension Request {
    /// Telemetry's `error.type` for the request as it stands (AlamofireNIO's, not Alamofire's): the
    /// status code of a response of 400 or more, else its error's ``AFError/telemetryErrorType``;
    /// nil when it succeeded.
    public var telemetryErrorType: String? {
        if let status = response?.statusCode, status >= 400 { return String(status) }
        return error?.telemetryErrorType
    }
}
