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
    /// Chunks written by a closure as the connection takes them (an integration's streamed body).
    case chunks(ChunkedRequestBody)

    /// Whether the body can be sent again without asking the delegate for a new stream.
    package var isReplayable: Bool {
        switch self {
        case .data, .file: true
        case .stream: false
        case .chunks(let body): body.isReplayable
        }
    }

    /// The body in the transport's terms.
    var transportBody: TransportRequest.Body {
        switch self {
        case .data(let data): .bytes(ByteBuffer(bytes: data))
        case .file(let url): .file(url)
        case .stream(let stream): .stream(length: nil, InputStreamBody(stream: stream).write)
        case .chunks(let body):
            body.isReplayable
                ? .replayableStream(length: body.length, body.transportWrite) : .stream(length: body.length, body.transportWrite)
        }
    }
}

/// A request body produced chunk by chunk by an async closure, such as an OpenAPI `HTTPBody`: each
/// chunk is sent before the next is asked for. A replayable body's ``write`` starts from the
/// beginning each time it is called (for a new connection, a redirect or a retry); another is
/// called again only where an `InputStream` would be asked for anew, so its second call should
/// throw rather than send part of the body.
package struct ChunkedRequestBody: Sendable {
    /// Sends one chunk, waiting while the connection's send buffer is full.
    package typealias Send = @Sendable (ArraySlice<UInt8>) async throws -> Void

    /// The body's length in bytes, if known (sent as `Content-Length`; otherwise chunked).
    package let length: Int64?
    /// Whether ``write`` produces the whole body again each time it is called.
    package let isReplayable: Bool
    /// Writes the whole body through `send`.
    package let write: @Sendable (_ send: Send) async throws -> Void

    package init(length: Int64?, isReplayable: Bool, write: @escaping @Sendable (_ send: Send) async throws -> Void) {
        self.length = length
        self.isReplayable = isReplayable
        self.write = write
    }

    /// ``write`` in the transport's terms.
    var transportWrite: @Sendable (TransportBodyWriter) async throws -> Void {
        let write = self.write
        return { writer in try await write { chunk in try await writer.write(ByteBuffer(bytes: chunk)) } }
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
