package import Foundation
package import NIOCore
import NIOFileSystem

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// A `file:` or `data:` URL, loaded as URLSession loads it: no exchange, a plain `URLResponse`
/// (not an `HTTPURLResponse`) with the MIME type, length and text encoding, and the bytes.
package enum LocalResource {
    /// What loading a local URL produced.
    package struct Loaded: Sendable {
        package let response: URLResponse
        package let body: ByteBuffer
    }

    /// Whether `url` names a local resource rather than an HTTP exchange.
    package static func isLocal(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "file", "data": true
        default: false
        }
    }

    /// Loads `url`, at most `maximumSize` bytes of it; failures carry URLSession's codes
    /// (`.fileDoesNotExist`, `.fileIsDirectory`, `.noPermissionsToReadFile`, `.badURL`, and
    /// `.dataLengthExceedsMaximum` past the limit).
    package static func load(_ url: URL, maximumSize: Int) async throws -> Loaded {
        if url.scheme?.lowercased() == "data" {
            let loaded = try decodeDataURL(url)
            guard loaded.body.readableBytes <= maximumSize else {
                throw URLError(.dataLengthExceedsMaximum, userInfo: [NSURLErrorFailingURLErrorKey: url])
            }
            return loaded
        }
        return try await readFile(url, maximumSize: maximumSize)
    }

    private static func readFile(_ url: URL, maximumSize: Int) async throws -> Loaded {
        let path = FilePath(url.path)
        let body: ByteBuffer
        do {
            guard let info = try await FileSystem.shared.info(forFileAt: path) else {
                throw URLError(.fileDoesNotExist, userInfo: [NSURLErrorFailingURLErrorKey: url])
            }
            if info.type == .directory {
                throw URLError(.fileIsDirectory, userInfo: [NSURLErrorFailingURLErrorKey: url])
            }
            body = try await FileSystem.shared.withFileHandle(forReadingAt: path) { handle in
                try await handle.readToEnd(maximumSizeAllowed: .bytes(Int64(min(maximumSize, Int(UInt32.max)))))
            }
        } catch let error as FileSystemError {
            let code: URLError.Code =
                switch error.code {
                case .notFound: .fileDoesNotExist
                case .permissionDenied: .noPermissionsToReadFile
                case .resourceExhausted: .dataLengthExceedsMaximum
                default: .cannotOpenFile
                }
            throw URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        let response = URLResponse(
            url: url, mimeType: MIMETypes.type(forPathExtension: url.pathExtension), expectedContentLength: body.readableBytes,
            textEncodingName: nil)
        return Loaded(response: response, body: body)
    }

    /// `data:[<media type>][;base64],<data>` (RFC 2397); the media type defaults to
    /// `text/plain;charset=US-ASCII`.
    static func decodeDataURL(_ url: URL) throws -> Loaded {
        let badURL = URLError(.badURL, userInfo: [NSURLErrorFailingURLErrorKey: url])
        let text = url.absoluteString
        guard let comma = text.firstIndex(of: ","), let colon = text.firstIndex(of: ":"), colon < comma else { throw badURL }
        var parameters = text[text.index(after: colon)..<comma].split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let payload = String(text[text.index(after: comma)...])
        let bytes: [UInt8]
        if isBase64 {
            let compact = (payload.removingPercentEncoding ?? payload).filter { !$0.isWhitespace }
            let padded = compact + String(repeating: "=", count: (4 - compact.count % 4) % 4)
            guard let decoded = Data(base64Encoded: padded) else { throw badURL }
            bytes = Array(decoded)
        } else {
            guard let decoded = payload.removingPercentEncoding else { throw badURL }
            bytes = Array(decoded.utf8)
        }
        let mimeType = parameters.first.flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? "text/plain"
        var charset = mimeType == "text/plain" && parameters.first?.isEmpty != false ? "US-ASCII" : nil
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "charset" { charset = String(pair[1]) }
        }
        let response = URLResponse(url: url, mimeType: mimeType, expectedContentLength: bytes.count, textEncodingName: charset)
        return Loaded(response: response, body: ByteBuffer(bytes: bytes))
    }
}

/// MIME types by file extension, for file URLs and multipart file parts.
package enum MIMETypes {
    private static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
        "csv": "text/csv", "xml": "application/xml", "js": "text/javascript", "mjs": "text/javascript",
        "json": "application/json", "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "plist": "application/x-plist", "md": "text/markdown", "rtf": "text/rtf",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml",
        "webp": "image/webp", "heic": "image/heic", "tif": "image/tiff", "tiff": "image/tiff", "bmp": "image/bmp", "ico": "image/x-icon",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "aac": "audio/aac", "ogg": "audio/ogg",
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "webm": "video/webm", "avi": "video/x-msvideo",
        "wasm": "application/wasm", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ]

    /// The MIME type for a file extension; `application/octet-stream` when it is unknown.
    package static func type(forPathExtension pathExtension: String) -> String {
        byExtension[pathExtension.lowercased()] ?? "application/octet-stream"
    }
}
