import AFSynchronization
public import Foundation
import Synchronization

/// Builds a `multipart/form-data` body (RFC 7578) for an upload, as Alamofire's `MultipartFormData` does.
///
/// Parts are appended from `Data`, from files or from `InputStream`s; nothing is read until the form is
/// encoded. There are two ways to encode it:
/// - ``encode()`` reads every part into one `Data` value. It is quick, but the whole body sits in memory,
///   so keep it for small forms.
/// - ``writeEncodedData(to:)`` streams every part, boundaries included, into a file in chunks, so memory
///   stays flat whatever the size of the parts. Use it for large files such as video.
///
/// `Session.upload(multipartFormData:...)` picks between the two with ``encodingMemoryThreshold``.
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(Data("Ada".utf8), withName: "name")
/// form.append(photoURL, withName: "photo")   // file name and MIME type come from the URL
/// let body = try form.encode()
/// ```
///
/// Appending a file that cannot be used does not fail at once: the first such failure is kept and thrown by
/// ``encode()`` or ``writeEncodedData(to:)``, so a form can be built in a closure that cannot throw.
///
/// Each `InputStream` is read once: encode a form once, as an upload does.
///
/// - Note: The class is `open`, as in Alamofire, so code that subclasses it keeps compiling. It is
///   `@unchecked Sendable` because the user's closure fills it on one thread and the upload encodes it on
///   another; the compiler cannot check a non-final class, so every piece of mutable state (the parts, the
///   first failure, a replaced `contentType`) lives behind one `Mutex`, and the parts' streams are only
///   touched while it is held.
///
/// - SeeAlso: [RFC 7578](https://www.rfc-editor.org/rfc/rfc7578), [RFC 2046 §5.1](https://www.rfc-editor.org/rfc/rfc2046#section-5.1)
open class MultipartFormData: @unchecked Sendable {
    /// The size in bytes under which `Session` encodes a form in memory; at or above it the form is written to
    /// a temporary file and uploaded from there.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The value of the request's `Content-Type` header, naming the ``boundary``:
    /// `multipart/form-data; boundary=<boundary>`.
    ///
    /// It may be replaced, for example with another multipart subtype; the body is laid out the same way.
    open var contentType: String {
        get { state.withLock { $0.contentType } ?? "multipart/form-data; boundary=\(boundary)" }
        set { state.withLock { $0.contentType = newValue } }
    }

    /// The total length in bytes of the parts' contents, without their headers and boundaries.
    public var contentLength: UInt64 {
        state.withLock { state in state.bodyParts.reduce(0) { $0 + $1.bodyContentLength } }
    }

    /// The boundary that separates the parts in the encoded body.
    public let boundary: String

    /// The file manager used to check appended files and the output file; an upload also uses it to create
    /// and remove the temporary file of a large form.
    let fileManager: FileManager

    /// The size of each read from a part's stream and of each write to the output file (Alamofire reads
    /// 1 KiB at a time; larger reads write a large form to disk with far fewer calls, to the same bytes).
    let streamBufferSize = 64 * 1024

    private let state = Mutex(State())

    /// Creates an empty form.
    ///
    /// - Parameters:
    ///   - fileManager: The `FileManager` used to inspect appended files and the file written by
    ///     ``writeEncodedData(to:)``. `.default` by default.
    ///   - boundary: The boundary between parts. `nil` (the default) makes a random one of the form
    ///     `alamofire.boundary.` followed by 16 hexadecimal digits.
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        self.fileManager = fileManager
        self.boundary = boundary ?? BoundaryGenerator.randomBoundary()
    }

    // MARK: - Appending parts

    /// Appends a part holding `data`.
    ///
    /// The part is laid out as:
    /// - `Content-Disposition: form-data; name="<name>"; filename="<fileName>"` (the `filename` parameter
    ///   only when `fileName` is given)
    /// - `Content-Type: <mimeType>` (only when `mimeType` is given)
    /// - the data
    ///
    /// - Parameters:
    ///   - data: The content of the part.
    ///   - name: The field name, in the `Content-Disposition` header.
    ///   - fileName: The file name, in the `Content-Disposition` header, if any.
    ///   - mimeType: The MIME type, in the `Content-Type` header, if any.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)
        append(InputStream(data: data), withLength: UInt64(data.count), headers: headers)
    }

    /// Appends a part holding the content of a file, naming it after the file.
    ///
    /// The `filename` parameter of the `Content-Disposition` header is the URL's last path component and the
    /// `Content-Type` is the MIME type of its path extension (`application/octet-stream` for an extension
    /// this package does not know; the overload taking `fileName` and `mimeType` gives both explicitly).
    ///
    /// A URL without a last path component or without a path extension records
    /// `AFError.MultipartEncodingFailureReason.bodyPartFilenameInvalid(in:)`; the file itself is then checked
    /// as that overload checks it. A failure is thrown later, by ``encode()`` or ``writeEncodedData(to:)``.
    ///
    /// - Parameters:
    ///   - fileURL: The `file:` URL of the file whose content makes the part.
    ///   - name: The field name, in the `Content-Disposition` header.
    public func append(_ fileURL: URL, withName name: String) {
        let fileName = fileURL.lastPathComponent
        let pathExtension = fileURL.pathExtension
        guard !fileName.isEmpty, !pathExtension.isEmpty else {
            recordFailure(.bodyPartFilenameInvalid(in: fileURL))
            return
        }
        append(fileURL, withName: name, fileName: fileName, mimeType: Self.mimeType(forPathExtension: pathExtension))
    }

    /// Appends a part holding the content of a file, with the given file name and MIME type.
    ///
    /// The part is laid out as:
    /// - `Content-Disposition: form-data; name="<name>"; filename="<fileName>"`
    /// - `Content-Type: <mimeType>`
    /// - the content of the file, read in chunks when the form is encoded
    ///
    /// The file is checked now, in this order, and the first problem is recorded (and thrown later by
    /// ``encode()`` or ``writeEncodedData(to:)``): the URL is not a `file:` URL (`bodyPartURLInvalid`), the
    /// file cannot be reached (`bodyPartFileNotReachable`, `bodyPartFileNotReachableWithError`), it does not
    /// exist as a regular file or is a directory (`bodyPartFileIsDirectory`), its size cannot be read
    /// (`bodyPartFileSizeNotAvailable`, `bodyPartFileSizeQueryFailedWithError`), or no stream can be opened
    /// on it (`bodyPartInputStreamCreationFailed`).
    ///
    /// - Parameters:
    ///   - fileURL: The `file:` URL of the file whose content makes the part.
    ///   - name: The field name, in the `Content-Disposition` header.
    ///   - fileName: The file name, in the `Content-Disposition` header.
    ///   - mimeType: The MIME type, in the `Content-Type` header.
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)

        guard fileURL.isFileURL else {
            recordFailure(.bodyPartURLInvalid(url: fileURL))
            return
        }

        // Apple platforms ask about the promised item (which may live in iCloud); elsewhere the file itself.
        // On Linux this turns a missing file into the same "no such file" Cocoa error (260) as on Apple
        // platforms, where Alamofire would otherwise report it as a directory.
        do {
            #if canImport(Darwin)
            let isReachable = try fileURL.checkPromisedItemIsReachable()
            #else
            let isReachable = try fileURL.checkResourceIsReachable()
            #endif
            guard isReachable else {
                recordFailure(.bodyPartFileNotReachable(at: fileURL))
                return
            }
        } catch {
            recordFailure(.bodyPartFileNotReachableWithError(atURL: fileURL, error: error))
            return
        }

        let path = fileURL.path
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            recordFailure(.bodyPartFileIsDirectory(at: fileURL))
            return
        }

        let length: UInt64
        do {
            let attributes = try fileManager.attributesOfItem(atPath: path)
            guard let size = Self.fileSize(from: attributes[.size]) else {
                recordFailure(.bodyPartFileSizeNotAvailable(at: fileURL))
                return
            }
            length = size
        } catch {
            recordFailure(.bodyPartFileSizeQueryFailedWithError(forURL: fileURL, error: error))
            return
        }

        guard let stream = InputStream(url: fileURL) else {
            recordFailure(.bodyPartInputStreamCreationFailed(for: fileURL))
            return
        }

        append(stream, withLength: length, headers: headers)
    }

    /// Appends a part read from a stream, with a file name and MIME type.
    ///
    /// The part is laid out as:
    /// - `Content-Disposition: form-data; name="<name>"; filename="<fileName>"`
    /// - `Content-Type: <mimeType>`
    /// - the bytes of the stream, read in chunks when the form is encoded
    ///
    /// - Parameters:
    ///   - stream: The stream to read the part from. It is opened, read and closed by the encoding.
    ///   - length: The number of bytes the stream holds. ``encode()`` fails with `inputStreamReadFailed` if the
    ///     stream holds another number.
    ///   - name: The field name, in the `Content-Disposition` header.
    ///   - fileName: The file name, in the `Content-Disposition` header.
    ///   - mimeType: The MIME type, in the `Content-Type` header.
    public func append(_ stream: InputStream, withLength length: UInt64, name: String, fileName: String, mimeType: String) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)
        append(stream, withLength: length, headers: headers)
    }

    /// Appends a part read from a stream, with headers of your own.
    ///
    /// The part is laid out as its headers, one `Name: value` line each in the order given, an empty line,
    /// then the bytes of the stream.
    ///
    /// ```swift
    /// form.append(stream, withLength: 42, headers: [
    ///     .contentDisposition(#"form-data; name="log"; filename="app.log""#),
    ///     .contentType("text/plain"),
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - stream: The stream to read the part from. It is opened, read and closed by the encoding.
    ///   - length: The number of bytes the stream holds. ``encode()`` fails with `inputStreamReadFailed` if the
    ///     stream holds another number.
    ///   - headers: The part's headers.
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        let part = BodyPart(headers: headers, bodyStream: stream, bodyContentLength: length)
        state.withLock { $0.bodyParts.append(part) }
    }

    // MARK: - Encoding

    /// Encodes every part, with their headers and boundaries, into one `Data` value.
    ///
    /// The whole body is held in memory: for large parts use ``writeEncodedData(to:)``.
    ///
    /// - Returns: The encoded body.
    /// - Throws: `AFError.multipartEncodingFailed(reason:)`: the first failure recorded while appending, or
    ///   `inputStreamReadFailed(error:)` if a part's stream fails or does not hold the announced length (its
    ///   error is then an `AFError.UnexpectedInputStreamLength`).
    public func encode() throws -> Data {
        try encodedData(of: try partsToEncode())
    }

    /// Writes every part, with their headers and boundaries, to a new file.
    ///
    /// Each part's content is copied from its stream to the file in chunks, so memory stays flat whatever the
    /// size of the parts; a part is copied up to its announced length.
    ///
    /// - Parameter fileURL: The `file:` URL of the file to create. It must not exist yet.
    /// - Throws: `AFError.multipartEncodingFailed(reason:)`: the first failure recorded while appending;
    ///   `outputStreamFileAlreadyExists(at:)` if a file exists at `fileURL`; `outputStreamURLInvalid(url:)` if
    ///   it is not a `file:` URL; `outputStreamCreationFailed(for:)` or `outputStreamWriteFailed(error:)` if
    ///   the file cannot be created or written; `inputStreamReadFailed(error:)` if a part's stream fails.
    public func writeEncodedData(to fileURL: URL) throws {
        let parts = try partsToEncode()
        do {
            if fileManager.fileExists(atPath: fileURL.path) {
                throw AFError.multipartEncodingFailed(reason: .outputStreamFileAlreadyExists(at: fileURL))
            }
            guard fileURL.isFileURL else {
                throw AFError.multipartEncodingFailed(reason: .outputStreamURLInvalid(url: fileURL))
            }
            guard let output = OutputStream(url: fileURL, append: false) else {
                throw AFError.multipartEncodingFailed(reason: .outputStreamCreationFailed(for: fileURL))
            }
            output.open()
            defer { output.close() }
            // Alamofire goes on silently when the file cannot be opened (for example, its folder is missing)
            // and leaves no file behind; failing here keeps the upload from sending a body that was never written.
            if output.streamStatus == .error {
                throw AFError.multipartEncodingFailed(
                    reason: output.streamError.map { .outputStreamWriteFailed(error: $0) } ?? .outputStreamCreationFailed(for: fileURL))
            }
            try writeEncodedParts(parts, to: output)
        }
    }

    // MARK: - Private

    /// The parts to encode, or the first failure met while appending. Encoding happens outside the
    /// lock: it does file I/O and reads the user's streams, which may call back into the form.
    private func partsToEncode() throws -> [BodyPart] {
        try state.withLock { state in
            if let failure = state.bodyPartError { throw failure }
            return state.bodyParts
        }
    }

    /// Everything that changes after `init`, kept behind `state`'s lock.
    private struct State: Sendable {
        var bodyParts: [BodyPart] = []
        /// The first failure met by an `append`; later ones are dropped, as in Alamofire.
        var bodyPartError: AFError?
        /// A `contentType` set by the user, replacing the one made from the boundary.
        var contentType: String?
    }

    private func contentHeaders(withName name: String, fileName: String? = nil, mimeType: String? = nil) -> HTTPHeaders {
        var disposition = "form-data; name=\"\(name)\""
        if let fileName {
            disposition += "; filename=\"\(fileName)\""
        }
        var headers: HTTPHeaders = [.contentDisposition(disposition)]
        if let mimeType {
            headers.add(.contentType(mimeType))
        }
        return headers
    }

    private func recordFailure(_ reason: AFError.MultipartEncodingFailureReason) {
        state.withLock { state in
            if state.bodyPartError == nil {
                state.bodyPartError = .multipartEncodingFailed(reason: reason)
            }
        }
    }

    /// A file's size from its `.size` attribute, which is an `NSNumber` on Apple platforms and may be a
    /// plain Swift integer in swift-corelibs-foundation.
    private static func fileSize(from attribute: Any?) -> UInt64? {
        switch attribute {
        case let size as UInt64: size
        case let size as UInt: UInt64(size)
        case let size as Int64: UInt64(exactly: size)
        case let size as Int: UInt64(exactly: size)
        case let size as NSNumber: size.uint64Value
        default: nil
        }
    }
}
