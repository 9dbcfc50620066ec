public import Foundation

// The texts are Alamofire's, word for word, so that logs and tests that print errors read the same.
// The failure reasons are not `CustomStringConvertible`: interpolating one prints its case, as in Alamofire.

extension AFError: LocalizedError {
    /// A description of the error, in Alamofire's words.
    public var errorDescription: String? {
        switch self {
        case .explicitlyCancelled:
            "Request explicitly cancelled."
        case .invalidURL(let url):
            "URL is not valid: \(url)"
        case .parameterEncodingFailed(let reason):
            reason.localizedDescription
        case .parameterEncoderFailed(let reason):
            reason.localizedDescription
        case .multipartEncodingFailed(let reason):
            reason.localizedDescription
        case .requestAdaptationFailed(let error):
            "Request adaption failed with error: \(error.localizedDescription)"
        case .responseValidationFailed(let reason):
            reason.localizedDescription
        case .responseSerializationFailed(let reason):
            reason.localizedDescription
        case .requestRetryFailed(let retryError, let originalError):
            "Request retry failed with retry error: \(retryError.localizedDescription), "
                + "original error: \(originalError.localizedDescription)"
        case .sessionDeinitialized:
            "Session was invalidated without error, so it was likely deinitialized unexpectedly. "
                + "Be sure to retain a reference to your Session for the duration of your requests."
        case .sessionInvalidated(let error):
            "Session was invalidated with error: \(error?.localizedDescription ?? "No description.")"
        case .serverTrustEvaluationFailed(let reason):
            "Server trust evaluation failed due to reason: \(reason.localizedDescription)"
        case .urlRequestValidationFailed(let reason):
            "URLRequest validation failed due to reason: \(reason.localizedDescription)"
        case .createUploadableFailed(let error):
            "Uploadable creation failed with error: \(error.localizedDescription)"
        case .createURLRequestFailed(let error):
            "URLRequest creation failed with error: \(error.localizedDescription)"
        case .downloadedFileMoveFailed(let error, let source, let destination):
            "Moving downloaded file from: \(source) to: \(destination) failed with error: \(error.localizedDescription)"
        case .sessionTaskFailed(let error):
            "URLSessionTask failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncodingFailureReason {
    var localizedDescription: String {
        switch self {
        case .missingURL: "URL request to encode was missing a URL"
        case .jsonEncodingFailed(let error): "JSON could not be encoded because of error:\n\(error.localizedDescription)"
        case .customEncodingFailed(let error): "Custom parameter encoder failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    var localizedDescription: String {
        switch self {
        case .missingRequiredComponent(let component): "Encoding failed due to a missing request component: \(component)"
        case .encoderFailed(let error): "The underlying encoder failed with the error: \(error)"
        }
    }
}

extension AFError.MultipartEncodingFailureReason {
    var localizedDescription: String {
        switch self {
        case .bodyPartURLInvalid(let url): "The URL provided is not a file URL: \(url)"
        case .bodyPartFilenameInvalid(let url): "The URL provided does not have a valid filename: \(url)"
        case .bodyPartFileNotReachable(let url): "The URL provided is not reachable: \(url)"
        case .bodyPartFileNotReachableWithError(let url, let error):
            "The system returned an error while checking the provided URL for reachability.\nURL: \(url)\nError: \(error)"
        case .bodyPartFileIsDirectory(let url): "The URL provided is a directory: \(url)"
        case .bodyPartFileSizeNotAvailable(let url): "Could not fetch the file size from the provided URL: \(url)"
        case .bodyPartFileSizeQueryFailedWithError(let url, let error):
            "The system returned an error while attempting to fetch the file size from the provided URL.\nURL: \(url)\nError: \(error)"
        case .bodyPartInputStreamCreationFailed(let url): "Failed to create an InputStream for the provided URL: \(url)"
        case .outputStreamCreationFailed(let url): "Failed to create an OutputStream for URL: \(url)"
        case .outputStreamFileAlreadyExists(let url): "A file already exists at the provided URL: \(url)"
        case .outputStreamURLInvalid(let url): "The provided OutputStream URL is invalid: \(url)"
        case .outputStreamWriteFailed(let error): "OutputStream write failed with error: \(error)"
        case .inputStreamReadFailed(let error): "InputStream read failed with error: \(error)"
        }
    }
}

extension AFError.ResponseSerializationFailureReason {
    var localizedDescription: String {
        switch self {
        case .inputDataNilOrZeroLength: "Response could not be serialized, input data was nil or zero length."
        case .inputFileNil: "Response could not be serialized, input file was nil."
        case .inputFileReadFailed(let url): "Response could not be serialized, input file could not be read: \(url)."
        case .stringSerializationFailed(let encoding): "String could not be serialized with encoding: \(encoding)."
        case .jsonSerializationFailed(let error): "JSON could not be serialized because of error:\n\(error.localizedDescription)"
        case .invalidEmptyResponse(let type):
            "Empty response could not be serialized to type: \(type). Use Empty as the expected type for such responses."
        case .decodingFailed(let error): "Response could not be decoded because of error:\n\(error.localizedDescription)"
        case .customSerializationFailed(let error): "Custom response serializer failed with error:\n\(error.localizedDescription)"
        }
    }
}

extension AFError.ResponseValidationFailureReason {
    var localizedDescription: String {
        switch self {
        case .dataFileNil: "Response could not be validated, data file was nil."
        case .dataFileReadFailed(let url): "Response could not be validated, data file could not be read: \(url)."
        case .missingContentType(let types):
            "Response Content-Type was missing and acceptable content types (\(types.joined(separator: ","))) do not match \"*/*\"."
        case .unacceptableContentType(let acceptableTypes, let responseType):
            "Response Content-Type \"\(responseType)\" does not match any acceptable types: \(acceptableTypes.joined(separator: ","))."
        case .unacceptableStatusCode(let code): "Response status code was unacceptable: \(code)."
        case .customValidationFailed(let error): "Custom response validation failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.ServerTrustFailureReason {
    var localizedDescription: String {
        switch self {
        case .noRequiredEvaluator(let host): "A ServerTrustEvaluating value is required for host \(host) but none was found."
        case .noCertificatesFound: "No certificates were found or provided for evaluation."
        case .noPublicKeysFound: "No public keys were found or provided for evaluation."
        case .policyApplicationFailed: "Attempting to set a SecPolicy failed."
        case .settingAnchorCertificatesFailed: "Attempting to set the provided certificates as anchor certificates failed."
        case .revocationPolicyCreationFailed: "Attempting to create a revocation policy failed."
        case .trustEvaluationFailed(let error): "SecTrust evaluation failed with error: \(error?.localizedDescription ?? "None")"
        case .defaultEvaluationFailed(let output): "Default evaluation failed for host \(output.host)."
        case .hostValidationFailed(let output): "Host validation failed for host \(output.host)."
        case .revocationCheckFailed(let output, _): "Revocation check failed for host \(output.host)."
        case .certificatePinningFailed(let host, _, _, _): "Certificate pinning failed for host \(host)."
        case .publicKeyPinningFailed(let host, _, _, _): "Public key pinning failed for host \(host)."
        case .customEvaluationFailed(let error): "Custom trust evaluation failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.URLRequestValidationFailureReason {
    var localizedDescription: String {
        switch self {
        case .bodyDataInGETRequest(let data):
            "Invalid URLRequest: Requests with GET method cannot have body data:\n\(String(decoding: data, as: UTF8.self))"
        }
    }
}
