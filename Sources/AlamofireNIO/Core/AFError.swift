public import Foundation

/// Every error AlamofireNIO produces, with Alamofire 5's cases and reasons.
///
/// Transport failures arrive as ``sessionTaskFailed(error:)`` wrapping the `URLError` URLSession
/// would have given (`.timedOut`, `.cancelled`, `.cannotConnectToHost`, ...).
public enum AFError: Error, @unchecked Sendable {
    /// Why a multipart form could not be encoded.
    public enum MultipartEncodingFailureReason: Sendable {
        /// The URL of a body part is not a file URL.
        case bodyPartURLInvalid(url: URL)
        /// The file URL of a body part has no usable filename (last path component or extension).
        case bodyPartFilenameInvalid(in: URL)
        /// The file of a body part cannot be reached.
        case bodyPartFileNotReachable(at: URL)
        /// Checking whether the file of a body part can be reached threw an error.
        case bodyPartFileNotReachableWithError(atURL: URL, error: any Error)
        /// The file URL of a body part points to a directory.
        case bodyPartFileIsDirectory(at: URL)
        /// The size of a body part's file could not be determined.
        case bodyPartFileSizeNotAvailable(at: URL)
        /// Querying the size of a body part's file threw an error.
        case bodyPartFileSizeQueryFailedWithError(forURL: URL, error: any Error)
        /// An `InputStream` could not be created for a body part's file.
        case bodyPartInputStreamCreationFailed(for: URL)
        /// An `OutputStream` could not be created to write the encoded form to a file.
        case outputStreamCreationFailed(for: URL)
        /// A file already exists where the encoded form was to be written.
        case outputStreamFileAlreadyExists(at: URL)
        /// The URL the encoded form was to be written to is not a file URL.
        case outputStreamURLInvalid(url: URL)
        /// Writing the encoded form to its `OutputStream` failed.
        case outputStreamWriteFailed(error: any Error)
        /// Reading a body part's `InputStream` failed.
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
        /// The request to encode has no URL.
        case missingURL
        /// `JSONSerialization` failed to encode the parameters.
        case jsonEncodingFailed(error: any Error)
        /// A custom `ParameterEncoding` failed.
        case customEncodingFailed(error: any Error)
    }

    /// Why a `ParameterEncoder` failed.
    public enum ParameterEncoderFailureReason: Sendable {
        /// What the request lacked.
        public enum RequiredComponent: Sendable {
            /// The request has no URL, or none could be made from it and the parameters.
            case url
            /// The request's HTTP method is missing or unknown; carries its raw value (`"nil"` when missing).
            case httpMethod(rawValue: String)
        }

        /// A component the encoder needs is missing from the request.
        case missingRequiredComponent(RequiredComponent)
        /// The underlying encoder failed.
        case encoderFailed(error: any Error)
    }

    /// Why a response failed validation.
    public enum ResponseValidationFailureReason: Sendable {
        /// There is no downloaded file to validate.
        case dataFileNil
        /// The downloaded file could not be read for validation.
        case dataFileReadFailed(at: URL)
        /// The response has no `Content-Type`, but acceptable content types were given.
        case missingContentType(acceptableContentTypes: [String])
        /// The response's `Content-Type` is not one of those acceptable.
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        /// The response's status code is not acceptable.
        case unacceptableStatusCode(code: Int)
        /// A custom validation failed.
        case customValidationFailed(error: any Error)
    }

    /// Why a response could not be serialized.
    public enum ResponseSerializationFailureReason: Sendable {
        /// The response had no data, or empty data, where that is not allowed.
        case inputDataNilOrZeroLength
        /// There is no downloaded file to serialize.
        case inputFileNil
        /// The downloaded file could not be read.
        case inputFileReadFailed(at: URL)
        /// The data could not be decoded as a string in the given encoding.
        case stringSerializationFailed(encoding: String.Encoding)
        /// `JSONSerialization` failed to parse the data.
        case jsonSerializationFailed(error: any Error)
        /// A `DataDecoder` failed to decode the data.
        case decodingFailed(error: any Error)
        /// A custom serializer failed.
        case customSerializationFailed(error: any Error)
        /// The response was empty but the type it should decode to cannot stand for an empty response.
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
        /// The request is a `GET` with body data, which URLSession refuses.
        case bodyDataInGETRequest(Data)
    }

    /// `createUploadable()` of an ``UploadableConvertible`` threw.
    case createUploadableFailed(error: any Error)
    /// `asURLRequest()` of a ``URLRequestConvertible`` threw.
    case createURLRequestFailed(error: any Error)
    /// A downloaded file could not be moved to its destination.
    case downloadedFileMoveFailed(error: any Error, source: URL, destination: URL)
    /// The request was cancelled by calling `cancel()`.
    case explicitlyCancelled
    /// A ``URLConvertible`` could not produce a URL.
    case invalidURL(url: any URLConvertible)
    /// Encoding a multipart form failed.
    case multipartEncodingFailed(reason: MultipartEncodingFailureReason)
    /// A ``ParameterEncoding`` failed.
    case parameterEncodingFailed(reason: ParameterEncodingFailureReason)
    /// A ``ParameterEncoder`` failed.
    case parameterEncoderFailed(reason: ParameterEncoderFailureReason)
    /// A ``RequestAdapter`` failed to adapt the request.
    case requestAdaptationFailed(error: any Error)
    /// A ``RequestRetrier`` failed the request with an error of its own; carries that error and the original one.
    case requestRetryFailed(retryError: any Error, originalError: any Error)
    /// The response failed validation.
    case responseValidationFailed(reason: ResponseValidationFailureReason)
    /// The response could not be serialized.
    case responseSerializationFailed(reason: ResponseSerializationFailureReason)
    /// The server's certificate chain was not trusted.
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
    /// The ``Session`` was deinitialized while the request was still running.
    case sessionDeinitialized
    /// The ``Session`` was invalidated, with the error that caused it, if any.
    case sessionInvalidated(error: (any Error)?)
    /// The request's task failed, typically with the `URLError` URLSession would have produced.
    case sessionTaskFailed(error: any Error)
    /// The `URLRequest` was refused before it was sent.
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

    /// Whether the error is `explicitlyCancelled`.
    public var isExplicitlyCancelledError: Bool { if case .explicitlyCancelled = self { true } else { false } }
    /// Whether the error is `invalidURL`.
    public var isInvalidURLError: Bool { if case .invalidURL = self { true } else { false } }
    /// Whether the error is `parameterEncodingFailed`.
    public var isParameterEncodingError: Bool { if case .parameterEncodingFailed = self { true } else { false } }
    /// Whether the error is `parameterEncoderFailed`.
    public var isParameterEncoderError: Bool { if case .parameterEncoderFailed = self { true } else { false } }
    /// Whether the error is `multipartEncodingFailed`.
    public var isMultipartEncodingError: Bool { if case .multipartEncodingFailed = self { true } else { false } }
    /// Whether the error is `requestAdaptationFailed`.
    public var isRequestAdaptationError: Bool { if case .requestAdaptationFailed = self { true } else { false } }
    /// Whether the error is `responseValidationFailed`.
    public var isResponseValidationError: Bool { if case .responseValidationFailed = self { true } else { false } }
    /// Whether the error is `responseSerializationFailed`.
    public var isResponseSerializationError: Bool { if case .responseSerializationFailed = self { true } else { false } }
    /// Whether the error is `serverTrustEvaluationFailed`.
    public var isServerTrustEvaluationError: Bool { if case .serverTrustEvaluationFailed = self { true } else { false } }
    /// Whether the error is `requestRetryFailed`.
    public var isRequestRetryError: Bool { if case .requestRetryFailed = self { true } else { false } }
    /// Whether the error is `createUploadableFailed`.
    public var isCreateUploadableError: Bool { if case .createUploadableFailed = self { true } else { false } }
    /// Whether the error is `createURLRequestFailed`.
    public var isCreateURLRequestError: Bool { if case .createURLRequestFailed = self { true } else { false } }
    /// Whether the error is `downloadedFileMoveFailed`.
    public var isDownloadedFileMoveError: Bool { if case .downloadedFileMoveFailed = self { true } else { false } }
    /// Whether the error is `sessionDeinitialized`.
    public var isSessionDeinitializedError: Bool { if case .sessionDeinitialized = self { true } else { false } }
    /// Whether the error is `sessionInvalidated`.
    public var isSessionInvalidatedError: Bool { if case .sessionInvalidated = self { true } else { false } }
    /// Whether the error is `sessionTaskFailed`.
    public var isSessionTaskError: Bool { if case .sessionTaskFailed = self { true } else { false } }
    /// Whether the error is `urlRequestValidationFailed`.
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
