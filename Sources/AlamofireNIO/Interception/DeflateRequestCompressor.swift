import CZlib
public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `RequestAdapter` which compresses outgoing `URLRequest` bodies using the `deflate` `Content-Encoding` and adds the
/// appropriate header.
///
/// The body becomes a zlib stream (RFC 1950: a two-byte header, raw deflate data, an Adler-32 trailer), which is
/// what `Content-Encoding: deflate` means. Only `httpBody` is compressed; a request without one, such as one with an
/// `httpBodyStream`, passes through unchanged.
///
/// ```swift
/// AF.request(url, method: .post, parameters: payload, encoder: JSONParameterEncoder.default,
///            interceptor: .deflateCompressor)
/// ```
///
/// - Note: Most requests to most APIs are small and so would only be slowed down by applying this adapter. Measure the
///         size of your request bodies and the performance impact of using this adapter before use. Using this adapter
///         with already compressed data, such as images, will, at best, have no effect. Compression runs
///         synchronously while the request is adapted. Finally, not all servers support request compression, so test
///         with all of your server configurations before deploying.
public struct DeflateRequestCompressor: Sendable, RequestInterceptor {
    /// Type that determines the action taken when the `URLRequest` already has a `Content-Encoding` header.
    public enum DuplicateHeaderBehavior: Sendable {
        /// Throws a `DuplicateHeaderError`. The default.
        case error
        /// Replaces the existing header value with `deflate`.
        case replace
        /// Silently skips compression when the header exists.
        case skip
    }

    /// `Error` produced when the outgoing `URLRequest` already has a `Content-Encoding` header, when the instance has
    /// been configured to produce an error.
    public struct DuplicateHeaderError: Error {
        /// Creates the error.
        public init() {}
    }

    /// Behavior to use when the outgoing `URLRequest` already has a `Content-Encoding` header.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior
    /// Closure which determines whether the outgoing body data should be compressed.
    public let shouldCompressBodyData: @Sendable (_ bodyData: Data) -> Bool

    /// Creates an instance with the provided parameters.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: `DuplicateHeaderBehavior` to use. `.error` by default.
    ///   - shouldCompressBodyData:  Closure which determines whether the outgoing body data should be compressed.
    ///                              `true` by default.
    @preconcurrency public init(
        duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) {
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompressBodyData = shouldCompressBodyData
    }

    /// Compresses the request's `httpBody` with deflate and sets `Content-Encoding: deflate`, following
    /// `duplicateHeaderBehavior` when the header is already present.
    @preconcurrency public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        // Only body data is compressed; streams are not.
        guard let bodyData = urlRequest.httpBody, shouldCompressBodyData(bodyData) else {
            completion(.success(urlRequest))
            return
        }

        if urlRequest.headers.value(for: "Content-Encoding") != nil {
            switch duplicateHeaderBehavior {
            case .error:
                completion(.failure(DuplicateHeaderError()))
                return
            case .replace:
                // The header is replaced below, once the body is compressed.
                break
            case .skip:
                completion(.success(urlRequest))
                return
            }
        }

        var compressedRequest = urlRequest
        do {
            compressedRequest.httpBody = try deflate(bodyData)
            compressedRequest.headers.update(.contentEncoding("deflate"))
            completion(.success(compressedRequest))
        } catch {
            completion(.failure(error))
        }
    }

    /// zlib level 5: Alamofire compresses with Apple's `COMPRESSION_ZLIB`, which is level 5, and writes the header
    /// `78 5E` that level gives; zlib's default (6) would write `78 9C`.
    static let compressionLevel: Int32 = 5

    /// What Apple's `NSData.compressed(using:)` throws when it fails, and so what Alamofire reports:
    /// `NSCompressionFailedError` (5376) in the Cocoa domain. Linux's `CocoaError.Code` has no name for it.
    static var compressionFailed: CocoaError { CocoaError(CocoaError.Code(rawValue: 5376)) }

    /// `data` as a zlib stream (RFC 1950).
    func deflate(_ data: Data) throws -> Data {
        var stream = z_stream()
        guard deflateInit_(&stream, Self.compressionLevel, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Self.compressionFailed
        }
        defer { deflateEnd(&stream) }

        // deflateBound is enough for the whole stream, so one Z_FINISH pass finishes it; the loop is there only for
        // inputs or outputs larger than zlib's 32-bit counters.
        var output = Data(count: Int(deflateBound(&stream, uLong(data.count))))
        let written: Int? = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int? in
            output.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int? in
                let source = input.bindMemory(to: Bytef.self)
                let destination = buffer.bindMemory(to: Bytef.self)
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.next_out = destination.baseAddress
                var inputLeft = source.count
                var outputLeft = destination.count
                while true {
                    let inputChunk = min(inputLeft, Int(uInt.max))
                    let outputChunk = min(outputLeft, Int(uInt.max))
                    stream.avail_in = uInt(inputChunk)
                    stream.avail_out = uInt(outputChunk)
                    let status = CZlib.deflate(&stream, inputChunk == inputLeft ? Z_FINISH : Z_NO_FLUSH)
                    inputLeft -= inputChunk - Int(stream.avail_in)
                    outputLeft -= outputChunk - Int(stream.avail_out)
                    if status == Z_STREAM_END { return destination.count - outputLeft }
                    // Z_BUF_ERROR (no progress possible) or a real failure: either way, no stream.
                    guard status == Z_OK else { return nil }
                }
            }
        }
        guard let written else { throw Self.compressionFailed }
        output.count = written
        return output
    }
}

extension RequestInterceptor where Self == DeflateRequestCompressor {
    /// Create a `DeflateRequestCompressor` with default `duplicateHeaderBehavior` and `shouldCompressBodyData` values.
    public static var deflateCompressor: DeflateRequestCompressor {
        DeflateRequestCompressor()
    }

    /// Creates a `DeflateRequestCompressor` with the provided `DuplicateHeaderBehavior` and `shouldCompressBodyData`
    /// closure.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: `DuplicateHeaderBehavior` to use. `.error` by default.
    ///   - shouldCompressBodyData:  Closure which determines whether the outgoing body data should be compressed.
    ///                              `true` by default.
    ///
    /// - Returns: The `DeflateRequestCompressor`.
    @preconcurrency public static func deflateCompressor(
        duplicateHeaderBehavior: DeflateRequestCompressor.DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) -> DeflateRequestCompressor {
        DeflateRequestCompressor(duplicateHeaderBehavior: duplicateHeaderBehavior, shouldCompressBodyData: shouldCompressBodyData)
    }
}
