import AFSynchronization
import Foundation

#if canImport(UniformTypeIdentifiers)
import UniformTypeIdentifiers
#endif

// How a form becomes bytes. For parts P1 ... Pn and boundary B the body is
//
//     --B CRLF  headers(P1) CRLF  content(P1)
//     CRLF --B CRLF  headers(P2) CRLF  content(P2)
//     ...
//     CRLF --B-- CRLF
//
// where headers(P) is one "Name: value CRLF" line per header in the part's order. An empty form is empty.
// Both encoders below produce exactly this; they differ only in where the content goes (memory or a file)
// and in how a stream whose length differs from the announced one is treated, which follows Alamofire:
// `encode()` reads each stream to its end and fails on any difference, `writeEncodedData(to:)` copies at
// most the announced length and stops early, without failing, at a stream's end.

extension MultipartFormData {
    /// The line ending of multipart bodies.
    enum EncodingCharacters {
        static let crlf = "\r\n"
    }

    /// Makes boundaries and the delimiter lines built from them.
    enum BoundaryGenerator {
        /// Where a delimiter line sits in the body.
        enum BoundaryType {
            /// Before the first part: `--B` CRLF.
            case initial
            /// Between two parts: CRLF `--B` CRLF.
            case encapsulated
            /// After the last part: CRLF `--B--` CRLF.
            case final
        }

        /// A random boundary, `alamofire.boundary.` and 16 lowercase hexadecimal digits, as Alamofire makes it.
        static func randomBoundary() -> String {
            let first = UInt32.random(in: UInt32.min...UInt32.max)
            let second = UInt32.random(in: UInt32.min...UInt32.max)
            return "alamofire.boundary.\(eightHexDigits(first))\(eightHexDigits(second))"
        }

        /// The delimiter line of the given type for `boundary`.
        static func boundaryData(forBoundaryType boundaryType: BoundaryType, boundary: String) -> Data {
            let crlf = EncodingCharacters.crlf
            let line =
                switch boundaryType {
                case .initial: "--\(boundary)\(crlf)"
                case .encapsulated: "\(crlf)--\(boundary)\(crlf)"
                case .final: "\(crlf)--\(boundary)--\(crlf)"
                }
            return Data(line.utf8)
        }

        private static func eightHexDigits(_ value: UInt32) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }
    }

    /// One appended part: its headers and the stream its content is read from, once, when the form is encoded.
    ///
    /// `@unchecked Sendable` so it can sit in the form's `Mutex`: its stream is only opened, read and closed
    /// while that lock is held.
    struct BodyPart: @unchecked Sendable {
        let headers: HTTPHeaders
        let bodyStream: InputStream
        let bodyContentLength: UInt64
    }

    // MARK: - Encoding in memory

    /// The whole body of `parts`, read into memory. The caller holds the form's lock.
    func encodedData(of parts: [BodyPart]) throws -> Data {
        var encoded = Data()
        for (index, part) in parts.enumerated() {
            encoded.append(leadingBytes(of: part, isFirst: index == 0))
            let start = encoded.count
            try readContent(of: part.bodyStream, upTo: .max) { chunk in encoded.append(chunk) }
            let bytesRead = UInt64(encoded.count - start)
            guard bytesRead == part.bodyContentLength else {
                let mismatch = AFError.UnexpectedInputStreamLength(bytesExpected: part.bodyContentLength, bytesRead: bytesRead)
                throw AFError.multipartEncodingFailed(reason: .inputStreamReadFailed(error: mismatch))
            }
        }
        if !parts.isEmpty {
            encoded.append(BoundaryGenerator.boundaryData(forBoundaryType: .final, boundary: boundary))
        }
        return encoded
    }

    // MARK: - Encoding to a file

    /// Writes the whole body of `parts` to an open stream, one chunk of content at a time. The caller holds the
    /// form's lock.
    func writeEncodedParts(_ parts: [BodyPart], to output: OutputStream) throws {
        for (index, part) in parts.enumerated() {
            try writeAll(leadingBytes(of: part, isFirst: index == 0), to: output)
            try readContent(of: part.bodyStream, upTo: part.bodyContentLength) { chunk in try writeAll(chunk, to: output) }
        }
        if !parts.isEmpty {
            try writeAll(BoundaryGenerator.boundaryData(forBoundaryType: .final, boundary: boundary), to: output)
        }
    }

    private func writeAll(_ data: Data, to output: OutputStream) throws {
        try Array(data).withUnsafeBufferPointer { try writeAll($0, to: output) }
    }

    /// Writes every byte of `bytes`, going on after short writes.
    private func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to output: OutputStream) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = output.write(base + offset, maxLength: bytes.count - offset)
            // A stream that takes nothing would otherwise spin here forever. Only a failed stream is asked
            // for its error: FoundationNetworking's `streamError` traps on a stream that has none.
            guard written > 0 else {
                let error = output.streamStatus == .error ? output.streamError : nil
                throw AFError.multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error ?? CocoaError(.fileWriteUnknown)))
            }
            offset += written
        }
    }

    // MARK: - Shared

    /// The delimiter line that opens a part, then its header block and the empty line that ends it.
    private func leadingBytes(of part: BodyPart, isFirst: Bool) -> Data {
        var bytes = BoundaryGenerator.boundaryData(forBoundaryType: isFirst ? .initial : .encapsulated, boundary: boundary)
        let crlf = EncodingCharacters.crlf
        let headerBlock = part.headers.map { "\($0.name): \($0.value)\(crlf)" }.joined() + crlf
        bytes.append(contentsOf: Array(headerBlock.utf8))
        return bytes
    }

    /// Opens `stream`, hands its bytes to `handleChunk` in chunks of at most `streamBufferSize` until it ends or
    /// `limit` bytes were read, and closes it.
    ///
    /// Reading goes on until `read` returns 0 rather than while `hasBytesAvailable`, which for some streams
    /// (files, on some platforms) says nothing certain about the end.
    private func readContent(
        of stream: InputStream, upTo limit: UInt64, _ handleChunk: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: streamBufferSize)
        var remaining = limit
        while remaining > 0 {
            let wanted = Int(min(UInt64(streamBufferSize), remaining))
            let count = stream.read(&buffer, maxLength: wanted)
            // Only a failed stream is asked for its error (FoundationNetworking's `streamError` traps on a
            // stream that has none), and its error is what the encoding fails with, as in Alamofire. A read
            // refused without one (a stream already read and closed, when a form is encoded twice) ends the
            // content: the length check then reports an `UnexpectedInputStreamLength`, as Alamofire does.
            if count < 0, stream.streamStatus == .error, let error = stream.streamError {
                throw AFError.multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
            }
            guard count > 0 else { break }
            try buffer.withUnsafeBufferPointer { try handleChunk(UnsafeBufferPointer(rebasing: $0[..<count])) }
            remaining -= UInt64(count)
        }
    }

    // MARK: - MIME types

    /// The MIME type for a file's path extension, `application/octet-stream` when it is not known.
    ///
    /// Apple platforms ask `UTType`, as Alamofire does. Linux has neither `UTType` nor CoreServices, so there
    /// the type comes from a table of common extensions (text, JSON, XML, web, image, audio, video, archive
    /// and office formats); the comparison ignores case.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        #if canImport(UniformTypeIdentifiers)
        return UTType(filenameExtension: pathExtension)?.preferredMIMEType ?? "application/octet-stream"
        #else
        return mimeTypesByPathExtension[pathExtension.lowercased()] ?? "application/octet-stream"
        #endif
    }
}

#if !canImport(UniformTypeIdentifiers)
private let mimeTypesByPathExtension: [String: String] = [
    // Text and data
    "txt": "text/plain",
    "text": "text/plain",
    "html": "text/html",
    "htm": "text/html",
    "css": "text/css",
    "csv": "text/csv",
    "rtf": "text/rtf",
    "js": "text/javascript",
    "mjs": "text/javascript",
    "json": "application/json",
    "xml": "application/xml",
    "pdf": "application/pdf",
    "bin": "application/octet-stream",
    // Images
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "svg": "image/svg+xml",
    "heic": "image/heic",
    "tif": "image/tiff",
    "tiff": "image/tiff",
    "bmp": "image/bmp",
    "ico": "image/vnd.microsoft.icon",
    // Audio and video
    "mp3": "audio/mpeg",
    "m4a": "audio/mp4",
    "aac": "audio/aac",
    "wav": "audio/wav",
    "mp4": "video/mp4",
    "mov": "video/quicktime",
    "webm": "video/webm",
    // Archives
    "zip": "application/zip",
    "gz": "application/gzip",
    "tar": "application/x-tar",
    // Office documents
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
]
#endif
