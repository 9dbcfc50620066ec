public import Foundation

/// Every error AlamofireNIO produces, with Alamofire 5's cases and reasons.
///
/// Transport failures arrive as ``sessionTaskFailed(error:)`` wrapping the `URLError` URLSession
/// would have given (`.timedOut`, `.cancelled`, `.cannotConnectToHost`, ...).
public enum AFError: Error, @unchecked Sendable {
    /// Why a multipart form could not be encoded.
    public enum MultipartEncodingFailureReason: Sendable {
        case bodyPartURLInvalid(url: URL)
        case bodyPartFilenameInvalid(in: URL)
        case bodyPartFileNotReachable(at: URL)
        case bodyPartFileNotReachableWithError(atURL: URL, error: any Error)
        case bodyPartFileIsDirectory(at: URL)
        case bodyPartFileSizeNotAvailable(at: URL)
        case bodyPartFileSizeQueryFailedWithError(forURL: URL, error: any Error)
        case bodyPartInputStreamCreationFailed(for: URL)
        case outputStreamCreationFailed(for: URL)
        case outputStreamFileAlreadyExists(at: URL)
        case outputStreamURLInvalid(url: URL)
        case outputStreamWriteFailed(error: any Error)
        case inputStreamReadFailed(error: any Error)
    }

    /// The body of an upload stream turned out longer or shorter than announced.
    public struct UnexpectedInputStreamLength: Error, Sendable {
        /// The length announced.
        public var bytesExpected: UInt64
        /// The length read.
        public var bytesRead: UInt64
    }

    /// Why a `ParameterEncoding` failed.
    public enum ParameterEncodingFailureReason: Sendable {
        case missingURL
        case jsonEncodingFailed(error: any Error)
        case customEncodingFailed(error: any Error)
    }

    /// Why a `ParameterEncoder` failed.
    public enum ParameterEncoderFailureReason: Sendable {
        /// What the request lacked.
        public enum RequiredComponent: Sendable {
            case url
            case httpMethod(rawValue: String)
        }

        case missingRequiredComponent(RequiredComponent)
        case encoderFailed(error: any Error)
    }

    /// Why a response failed validation.
    public enum ResponseValidationFailureReason: Sendable {
        case dataFileNil
        case dataFileReadFailed(at: URL)
        case missingContentType(acceptableContentTypes: [String])
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        case unacceptableStatusCode(code: Int)
        case customValidationFailed(error: any Error)
    }

    /// Why a response could not be serialized.
    public enum ResponseSerializationFailureReason: Sendable {
        case inputDataNilOrZeroLength
        case inputFileNil
        case inputFileReadFailed(at: URL)
        case stringSerializationFailed(encoding: String.Encoding)
        case jsonSerializationFailed(error: any Error)
        case decodingFailed(error: any Error)
        case customSerializationFailed(error: any Error)
        case invalidEmptyResponse(type: String)
    }

    /// Why a server was not trusted. The trust, certificates and keys are AlamofireNIO's Linux
    /// stand-ins for Security's types (``SecTrust``, ``SecCertificate``, ``SecKey``).
    public enum ServerTrustFailureReason: Sendable {
        /// What a failed evaluation saw. Where Security reports an `OSStatus` and a
        /// `SecTrustResultType`, Linux reports the error that says what failed.
        public struct Output: Sendable {
            /// The host evaluated.
            public let host: String
            /// The trust evaluated: the server's chain.
            public let trust: SecTrust
            /// Why the evaluation failed: a `URLError` (an expired, untrusted or misnamed certificate,
            /// coded as URLSession codes it) or a ``RevocationCheckError``.
            public let error: any Error

            init(_ host: String, _ trust: SecTrust, _ error: any Error) {
                self.host = host
                self.trust = trust
                self.error = error
            }
        }

        /// No `ServerTrustEvaluator` was found for the associated host.
        case noRequiredEvaluator(host: String)
        /// No certificates were found with which to perform the trust evaluation.
        case noCertificatesFound
        /// No public keys were found with which to perform the trust evaluation.
        case noPublicKeysFound
        /// During evaluation, application of the associated `SecPolicy` failed. (Alamofire's; AlamofireNIO's
        /// evaluation, which applies policies as values, never fails this way.)
        case policyApplicationFailed(trust: SecTrust, policy: SecPolicy, status: OSStatus)
        /// During evaluation, setting the associated anchor certificates failed. (Alamofire's; never produced here.)
        case settingAnchorCertificatesFailed(status: OSStatus, certificates: [SecCertificate])
        /// During evaluation, creation of the revocation policy failed. (Alamofire's; never produced here.)
        case revocationPolicyCreationFailed
        /// `SecTrust` evaluation failed with the associated error.
        case trustEvaluationFailed(error: (any Error)?)
        /// Default evaluation failed with the associated `Output`.
        case defaultEvaluationFailed(output: Output)
        /// Host validation failed with the associated `Output`.
        case hostValidationFailed(output: Output)
        /// Revocation check failed with the associated `Output` and options.
        case revocationCheckFailed(output: Output, options: RevocationTrustEvaluator.Options)
        /// Certificate pinning failed.
        case certificatePinningFailed(
            host: String, trust: SecTrust, pinnedCertificates: [SecCertificate], serverCertificates: [SecCertificate])
        /// Public key pinning failed.
        case publicKeyPinningFailed(host: String, trust: SecTrust, pinnedKeys: [SecKey], serverKeys: [SecKey])
        /// Custom server trust evaluation failed due to the associated `Error`.
        case customEvaluationFailed(error: any Error)
    }

    /// Why a `URLRequest` was refused before it was sent.
    public enum URLRequestValidationFailureReason: Sendable {
        case bodyDataInGETRequest(Data)
    }

    case createUploadableFailed(error: any Error)
    case createURLRequestFailed(error: any Error)
    case downloadedFileMoveFailed(error: any Error, source: URL, destination: URL)
    case explicitlyCancelled
    case invalidURL(url: any URLConvertible)
    case multipartEncodingFailed(reason: MultipartEncodingFailureReason)
    case parameterEncodingFailed(reason: ParameterEncodingFailureReason)
    case parameterEncoderFailed(reason: ParameterEncoderFailureReason)
    case requestAdaptationFailed(error: any Error)
    case requestRetryFailed(retryError: any Error, originalError: any Error)
    case responseValidationFailed(reason: ResponseValidationFailureReason)
    case responseSerializationFailed(reason: ResponseSerializationFailureReason)
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
    case sessionDeinitialized
    case sessionInvalidated(error: (any Error)?)
    case sessionTaskFailed(error: any Error)
    case urlRequestValidationFailed(reason: URLRequestValidationFailureReason)
}

extension Error {
    /// The error as an ``AFError``, if it is one.
    public var asAFError: AFError? { self as? AFError }

    /// Returns the instance cast as an `AFError`. If casting fails, a `fatalError` with the specified `message` is
    /// thrown: use it only where anything but an `AFError` is a programming error.
    public func asAFError(orFailWith message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> AFError {
        guard let afError = self as? AFError else { fatalError(message(), file: file, line: line) }
        return afError
    }

    /// The error as an ``AFError``, or the one `defaultAFError` makes.
    func asAFError(or defaultAFError: @autoclosure () -> AFError) -> AFError {
        self as? AFError ?? defaultAFError()
    }
}

// MARK: - Is

extension AFError {
    /// The download resume data of any underlying network error. Only produced by `DownloadRequest`s.
    public var downloadResumeData: Data? {
        (underlyingError as? URLError)?.userInfo["NSURLSessionDownloadTaskResumeData"] as? Data
    }

    public var isExplicitlyCancelledError: Bool { if case .explicitlyCancelled = self { true } else { false } }
    public var isInvalidURLError: Bool { if case .invalidURL = self { true } else { false } }
    public var isParameterEncodingError: Bool { if case .parameterEncodingFailed = self { true } else { false } }
    public var isParameterEncoderError: Bool { if case .parameterEncoderFailed = self { true } else { false } }
    public var isMultipartEncodingError: Bool { if case .multipartEncodingFailed = self { true } else { false } }
    public var isRequestAdaptationError: Bool { if case .requestAdaptationFailed = self { true } else { false } }
    public var isResponseValidationError: Bool { if case .responseValidationFailed = self { true } else { false } }
    public var isResponseSerializationError: Bool { if case .responseSerializationFailed = self { true } else { false } }
    public var isServerTrustEvaluationError: Bool { if case .serverTrustEvaluationFailed = self { true } else { false } }
    public var isRequestRetryError: Bool { if case .requestRetryFailed = self { true } else { false } }
    public var isCreateUploadableError: Bool { if case .createUploadableFailed = self { true } else { false } }
    public var isCreateURLRequestError: Bool { if case .createURLRequestFailed = self { true } else { false } }
    public var isDownloadedFileMoveError: Bool { if case .downloadedFileMoveFailed = self { true } else { false } }
    public var isSessionDeinitializedError: Bool { if case .sessionDeinitialized = self { true } else { false } }
    public var isSessionInvalidatedError: Bool { if case .sessionInvalidated = self { true } else { false } }
    public var isSessionTaskError: Bool { if case .sessionTaskFailed = self { true } else { false } }
    public var isURLRequestValidationError: Bool { if case .urlRequestValidationFailed = self { true } else { false } }
}

// MARK: - Values

extension AFError {
    /// The value that failed to become a URL, for ``invalidURL(url:)``.
    public var urlConvertible: (any URLConvertible)? {
        guard case .invalidURL(let url) = self else { return nil }
        return url
    }

    /// The URL involved in the failure, when there is one.
    public var url: URL? {
        switch self {
        case .multipartEncodingFailed(let reason): reason.url
        default: nil
        }
    }

    /// The error this one wraps, when it wraps one.
    public var underlyingError: (any Error)? {
        switch self {
        case .multipartEncodingFailed(let reason): reason.underlyingError
        case .parameterEncodingFailed(let reason): reason.underlyingError
        case .parameterEncoderFailed(let reason): reason.underlyingError
        case .responseValidationFailed(let reason): reason.underlyingError
        case .responseSerializationFailed(let reason): reason.underlyingError
        case .serverTrustEvaluationFailed(let reason): reason.underlyingError
        case .requestAdaptationFailed(let error), .createUploadableFailed(let error), .createURLRequestFailed(let error),
            .downloadedFileMoveFailed(let error, _, _), .sessionTaskFailed(let error), .requestRetryFailed(let error, _):
            error
        case .sessionInvalidated(let error): error
        case .explicitlyCancelled, .invalidURL, .sessionDeinitialized, .urlRequestValidationFailed: nil
        }
    }

    /// The content types validation accepted, for content-type failures.
    public var acceptableContentTypes: [String]? {
        guard case .responseValidationFailed(let reason) = self else { return nil }
        switch reason {
        case .missingContentType(let types), .unacceptableContentType(let types, _): return types
        default: return nil
        }
    }

    /// The response's content type, for ``ResponseValidationFailureReason/unacceptableContentType(acceptableContentTypes:responseContentType:)``.
    public var responseContentType: String? {
        guard case .responseValidationFailed(.unacceptableContentType(_, let type)) = self else { return nil }
        return type
    }

    /// The status code, for ``ResponseValidationFailureReason/unacceptableStatusCode(code:)``.
    public var responseCode: Int? {
        guard case .responseValidationFailed(.unacceptableStatusCode(let code)) = self else { return nil }
        return code
    }

    /// The encoding that failed, for ``ResponseSerializationFailureReason/stringSerializationFailed(encoding:)``.
    public var failedStringEncoding: String.Encoding? {
        guard case .responseSerializationFailed(.stringSerializationFailed(let encoding)) = self else { return nil }
        return encoding
    }

    /// The file a download could not be moved from.
    public var sourceURL: URL? {
        guard case .downloadedFileMoveFailed(_, let source, _) = self else { return nil }
        return source
    }

    /// The place a download could not be moved to.
    public var destinationURL: URL? {
        guard case .downloadedFileMoveFailed(_, _, let destination) = self else { return nil }
        return destination
    }
}

extension AFError.MultipartEncodingFailureReason {
    var url: URL? {
        switch self {
        case .bodyPartURLInvalid(let url), .bodyPartFilenameInvalid(let url), .bodyPartFileNotReachable(let url),
            .bodyPartFileIsDirectory(let url), .bodyPartFileSizeNotAvailable(let url), .bodyPartInputStreamCreationFailed(let url),
            .outputStreamCreationFailed(let url), .outputStreamFileAlreadyExists(let url), .outputStreamURLInvalid(let url),
            .bodyPartFileNotReachableWithError(let url, _), .bodyPartFileSizeQueryFailedWithError(let url, _):
            url
        case .outputStreamWriteFailed, .inputStreamReadFailed:
            nil
        }
    }

    var underlyingError: (any Error)? {
        switch self {
        case .bodyPartFileNotReachableWithError(_, let error), .bodyPartFileSizeQueryFailedWithError(_, let error),
            .outputStreamWriteFailed(let error), .inputStreamReadFailed(let error):
            error
        default:
            nil
        }
    }
}

extension AFError.ParameterEncodingFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case .jsonEncodingFailed(let error), .customEncodingFailed(let error): error
        case .missingURL: nil
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    var underlyingError: (any Error)? {
        guard case .encoderFailed(let error) = self else { return nil }
        return error
    }
}

extension AFError.ResponseValidationFailureReason {
    var underlyingError: (any Error)? {
        guard case .customValidationFailed(let error) = self else { return nil }
        return error
    }
}

extension AFError.ResponseSerializationFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case .jsonSerializationFailed(let error), .decodingFailed(let error), .customSerializationFailed(let error): error
        default: nil
        }
    }
}

extension AFError.ServerTrustFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case .customEvaluationFailed(let error): error
        case .trustEvaluationFailed(let error): error
        case .defaultEvaluationFailed(let output), .hostValidationFailed(let output), .revocationCheckFailed(let output, _): output.error
        default: nil
        }
    }
}
