import AlamofireNIOTransport
package import Foundation
import NIOCore

/// Where a task's request body comes from, when it is not the request's `httpBody`.
package enum RequestBody: @unchecked Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file, streamed from disk on every hop.
    case file(URL)
    /// A stream, read once: a hop that must repeat it (a 307) asks the delegate for a new one.
    case stream(InputStream)

    /// Whether the body can be sent again as it is.
    package var isReplayable: Bool {
        if case .stream = self { false } else { true }
    }

    /// The body in the transport's terms.
    var transportBody: TransportRequest.Body {
        switch self {
        case .data(let data): .bytes(ByteBuffer(bytes: data))
        case .file(let url): .file(url)
        case .stream(let stream): .stream(length: nil, InputStreamBody(stream: stream).write)
        }
    }
}

/// Reads an `InputStream` in chunks and writes them as the request body.
private struct InputStreamBody: @unchecked Sendable {
    let stream: InputStream
    static let chunkSize = 64 * 1024

    func write(_ writer: TransportBodyWriter) async throws {
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 {
                throw TransportError(.cannotOpenFile, "the upload stream failed", underlyingError: stream.streamError)
            }
            if count == 0 { return }
            try await writer.write(ByteBuffer(bytes: buffer[0..<count]))
        }
    }
}
