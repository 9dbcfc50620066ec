public import Foundation

extension AFError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .explicitlyCancelled:
            "The request was explicitly cancelled."
        case .invalidURL(let url):
            "The URL is not valid: \(url)."
        case .parameterEncodingFailed(let reason):
            reason.description
        case .parameterEncoderFailed(let reason):
            reason.description
        case .multipartEncodingFailed(let reason):
            reason.description
        case .requestAdaptationFailed(let error):
            "The request could not be adapted: \(error.localizedDescription)"
        case .responseValidationFailed(let reason):
            reason.description
        case .responseSerializationFailed(let reason):
            reason.description
        case .requestRetryFailed(let retryError, let originalError):
            "The retrier failed with \(retryError.localizedDescription) while retrying after \(originalError.localizedDescription)"
        case .createUploadableFailed(let error):
            "The upload body could not be created: \(error.localizedDescription)"
        case .createURLRequestFailed(let error):
            "The URLRequest could not be created: \(error.localizedDescription)"
        case .downloadedFileMoveFailed(let error, let source, let destination):
            "The downloaded file could not be moved from \(source.path) to \(destination.path): \(error.localizedDescription)"
        case .sessionDeinitialized:
            "The Session was deinitialized before the request finished; keep a reference to the Session for as long as it is used."
        case .sessionInvalidated(let error):
            "The Session was invalidated\(error.map { ": \($0.localizedDescription)" } ?? ".")"
        case .serverTrustEvaluationFailed(let reason):
            "The server is not trusted: \(reason.description)"
        case .urlRequestValidationFailed(let reason):
            reason.description
        case .sessionTaskFailed(let error):
            "The request failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncodingFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .missingURL: "The request to encode parameters into has no URL."
        case .jsonEncodingFailed(let error): "The parameters could not be encoded as JSON: \(error.localizedDescription)"
        case .customEncodingFailed(let error): "A custom parameter encoding failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncoderFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .missingRequiredComponent(.url): "The request to encode parameters into has no URL."
        case .missingRequiredComponent(.httpMethod(let method)):
            "The request to encode parameters into has no usable HTTP method: \(method)."
        case .encoderFailed(let error): "The parameters could not be encoded: \(error.localizedDescription)"
        }
    }
}

extension AFError.MultipartEncodingFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bodyPartURLInvalid(let url): "The body part URL is not a file URL: \(url)."
        case .bodyPartFilenameInvalid(let url): "No file name could be taken from the body part URL: \(url)."
        case .bodyPartFileNotReachable(let url): "The body part file cannot be reached: \(url)."
        case .bodyPartFileNotReachableWithError(let url, let error):
            "The body part file cannot be reached: \(url): \(error.localizedDescription)"
        case .bodyPartFileIsDirectory(let url): "The body part URL is a directory: \(url)."
        case .bodyPartFileSizeNotAvailable(let url): "The size of the body part file is not available: \(url)."
        case .bodyPartFileSizeQueryFailedWithError(let url, let error):
            "The size of the body part file could not be read: \(url): \(error.localizedDescription)"
        case .bodyPartInputStreamCreationFailed(let url): "No input stream could be opened for the body part file: \(url)."
        case .outputStreamCreationFailed(let url): "No output stream could be opened for: \(url)."
        case .outputStreamFileAlreadyExists(let url): "A file already exists where the form was to be written: \(url)."
        case .outputStreamURLInvalid(let url): "The output URL is not a file URL: \(url)."
        case .outputStreamWriteFailed(let error): "Writing the form failed: \(error.localizedDescription)"
        case .inputStreamReadFailed(let error): "Reading a body part failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ResponseValidationFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .dataFileNil: "The downloaded file to validate does not exist."
        case .dataFileReadFailed(let url): "The downloaded file to validate could not be read: \(url)."
        case .missingContentType(let types):
            "The response has no Content-Type, but one of these was required: \(types.joined(separator: ", "))."
        case .unacceptableContentType(let types, let type):
            "The response's Content-Type \(type) is not one of: \(types.joined(separator: ", "))."
        case .unacceptableStatusCode(let code): "The response's status code was unacceptable: \(code)."
        case .customValidationFailed(let error): "Custom validation failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ResponseSerializationFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .inputDataNilOrZeroLength: "The response had no data to serialize."
        case .inputFileNil: "The download had no file to serialize."
        case .inputFileReadFailed(let url): "The downloaded file could not be read: \(url)."
        case .stringSerializationFailed(let encoding): "The response could not be decoded as a string with \(encoding)."
        case .jsonSerializationFailed(let error): "The response is not valid JSON: \(error.localizedDescription)"
        case .decodingFailed(let error): "The response could not be decoded: \(error.localizedDescription)"
        case .customSerializationFailed(let error): "A custom serializer failed: \(error.localizedDescription)"
        case .invalidEmptyResponse(let type): "The response was empty, but \(type) cannot be made from an empty response."
        }
    }
}

extension AFError.ServerTrustFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noRequiredEvaluator(let host): "No trust evaluator was configured for the host \(host)."
        case .noCertificatesFound: "No certificates were found or provided for evaluation."
        case .noPublicKeysFound: "No public keys were found or provided for evaluation."
        case .trustEvaluationFailed(let error): "Trust evaluation failed\(error.map { ": \($0.localizedDescription)" } ?? ".")"
        case .defaultEvaluationFailed(let output): "Default evaluation failed for \(output.host): \(output.error.localizedDescription)"
        case .hostValidationFailed(let output): "The certificate is not valid for \(output.host): \(output.error.localizedDescription)"
        case .revocationCheckFailed(let output, _):
            "The revocation check failed for \(output.host): \(output.error.localizedDescription)"
        case .certificatePinningFailed(let host, _, _, _): "No pinned certificate matched the server's for \(host)."
        case .publicKeyPinningFailed(let host, _, _, _): "No pinned public key matched the server's for \(host)."
        case .customEvaluationFailed(let error): "Custom trust evaluation failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.URLRequestValidationFailureReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bodyDataInGETRequest(let data): "A GET request cannot carry a body (\(data.count) bytes were given)."
        }
    }
}
