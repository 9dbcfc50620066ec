package import NIOCore
import NIOHTTP1
import NIOHTTPCompression

#if Brotli
import CBrotli
#endif
#if Zstd
import CZstd
#endif

// Brotli (`br`, RFC 7932) and Zstandard (`zstd`, RFC 8878) response bodies, decoded as they arrive
// with the system's libraries, each behind a package trait of the same name (off by default, so
// that a consumer without the libraries still builds). gzip and deflate are NIOHTTPCompression's,
// in the handler before this one. Like gzip, the decoded body may be at most a given number of
// times the size of the encoded one, and its memory follows what arrived: output is made and handed
// on in chunks of at most `chunkSize` bytes, and a Zstandard frame may not ask for a window over
// 8 MiB (RFC 9659's limit for HTTP) whatever it announces.

/// A content coding this build decodes besides gzip and deflate.
package enum ContentCoding: String, Sendable, CaseIterable {
    case brotli = "br"
    case zstd

    /// The codings this build decodes: those whose trait is enabled.
    package static let decodable: [ContentCoding] = allCases.filter(\.isDecodable)

    /// Whether this build has the coding's library.
    package var isDecodable: Bool {
        switch self {
        case .brotli:
            #if Brotli
            true
            #else
            false
            #endif
        case .zstd:
            #if Zstd
            true
            #else
            false
            #endif
        }
    }

    /// The coding a `Content-Encoding` value names, when this build decodes it.
    package init?(contentEncoding value: String) {
        let name = value.trimmingASCIISpaces.lowercased()
        guard let coding = ContentCoding(rawValue: name), coding.isDecodable else { return nil }
        self = coding
    }

    /// A new streaming decoder for the coding.
    package func makeDecoder() throws -> any ContentStreamDecoder {
        switch self {
        case .brotli:
            #if Brotli
            return try BrotliStreamDecoder()
            #else
            throw ContentDecodingError.unsupported
            #endif
        case .zstd:
            #if Zstd
            return try ZstdStreamDecoder()
            #else
            throw ContentDecodingError.unsupported
            #endif
        }
    }
}

/// Why a body could not be decoded.
package enum ContentDecodingError: Error, Equatable {
    /// The bytes are not in the coding.
    case malformed
    /// The body ended before the coded stream did.
    case truncated
    /// Bytes came after the coded stream's end.
    case trailingData
    /// The decoded body passed its limit (a ratio to the coded body's size).
    case limitExceeded
    /// This build lacks the coding's library.
    case unsupported
    /// The library could not make a decoder.
    case outOfMemory
}

/// Decodes one coded stream fed in pieces.
package protocol ContentStreamDecoder: AnyObject {
    /// Decodes all of `input`, calling `emit` with each chunk of output (at most `chunkSize` bytes).
    func decode(_ input: inout ByteBuffer, allocator: ByteBufferAllocator, emit: (ByteBuffer) throws -> Void) throws
    /// Whether the coded stream has ended (and all its output was emitted).
    var isFinished: Bool { get }
}

extension ContentStreamDecoder {
    /// The most output made at once.
    package static var chunkSize: Int { 64 * 1024 }
}

/// Counts coded and decoded bytes against a ratio limit, as NIOHTTPCompression's `.ratio` does.
package struct ContentDecodingBudget {
    let ratio: Int?
    package private(set) var codedBytes = 0
    package private(set) var decodedBytes = 0

    package init(ratio: Int?) { self.ratio = ratio }

    package mutating func received(coded count: Int) { codedBytes += count }

    package mutating func produced(decoded count: Int) throws {
        decodedBytes += count
        guard let ratio else { return }
        // A limit past Int.max is no limit; a ratio below 1 allows as much as arrived.
        let (allowed, overflow) = codedBytes.multipliedReportingOverflow(by: max(ratio, 1))
        if !overflow, decodedBytes > allowed { throw ContentDecodingError.limitExceeded }
    }
}

/// Decodes `br` and `zstd` response bodies on their way to the exchange, and passes every other
/// response through untouched. After a failure it drops the rest of the response: the error, fired
/// down the pipeline, ends the exchange.
final class ContentDecodingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private var decoder: (any ContentStreamDecoder)?
    private var budget: ContentDecodingBudget
    private var failed = false

    /// - Parameter ratio: the most the decoded body may be, as a multiple of the coded body's size;
    ///   nil for no limit.
    init(ratio: Int?) {
        self.budget = ContentDecodingBudget(ratio: ratio)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            failed = false
            decoder = nil
            budget = ContentDecodingBudget(ratio: budget.ratio)
            // One coding only: a body coded twice (`br, gzip`, or two header lines) is left as it
            // came, as NIOHTTPCompression leaves codings it does not know.
            let codings = head.headers[canonicalForm: "Content-Encoding"]
            var decoderError: (any Error)?
            if codings.count == 1, let coding = ContentCoding(contentEncoding: String(codings[0])) {
                do {
                    decoder = try coding.makeDecoder()
                } catch {
                    decoderError = error
                }
            }
            context.fireChannelRead(data)
            // The head goes first, so the failure is the response's and not a silent connection's.
            if let decoderError { fail(decoderError, context) }
        case .body(var buffer):
            guard !failed else { return }
            guard let decoder else { return context.fireChannelRead(data) }
            budget.received(coded: buffer.readableBytes)
            do {
                try decoder.decode(&buffer, allocator: context.channel.allocator) { output in
                    try budget.produced(decoded: output.readableBytes)
                    context.fireChannelRead(wrapInboundOut(.body(output)))
                }
            } catch {
                fail(error, context)
            }
        case .end:
            guard !failed else { return }
            // A body of no bytes (a HEAD's, a 204's) is empty, whatever its coding says.
            if let decoder, budget.codedBytes > 0, !decoder.isFinished {
                return fail(ContentDecodingError.truncated, context)
            }
            decoder = nil
            context.fireChannelRead(data)
        }
    }

    private func fail(_ error: any Error, _ context: ChannelHandlerContext) {
        failed = true
        decoder = nil
        context.fireErrorCaught(error)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the response body decoders: NIOHTTPCompression's for gzip and deflate, then ours for
    /// br and zstd when this build decodes either, both bounded by `ratio`.
    func addResponseDecoders(ratio: Int) throws {
        try addHandler(NIOHTTPResponseDecompressor(limit: .ratio(ratio)))
        if !ContentCoding.decodable.isEmpty { try addHandler(ContentDecodingHandler(ratio: ratio)) }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingASCIISpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
