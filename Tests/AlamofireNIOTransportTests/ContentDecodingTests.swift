import Foundation
import HTTPBinServer
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AlamofireNIOTransport

#if Brotli && Zstd
/// `br` and `zstd` bodies: the decoders as values (chunked output, limits, broken and cut streams,
/// Zstandard's window bound), the handler on an embedded channel, and whole exchanges over HTTP/1.1
/// and HTTP/2 against the test server.
@Suite struct ContentDecodingTests {
    static let plain: [UInt8] = {
        var generator = SeededBytes(seed: 7)
        // Half random, half repeated: it compresses, and its output spans many chunks.
        let random = generator.next(150_000)
        return random + Array(repeating: 0x61, count: 150_000)
    }()

    static func coded(_ coding: ContentCoding, _ bytes: [UInt8] = plain) throws -> [UInt8] {
        switch coding {
        case .brotli: try ContentEncoder.brotli(bytes)
        case .zstd: try ContentEncoder.zstd(bytes)
        }
    }

    /// Feeds `coded` in pieces of `piece` bytes and returns the output chunks.
    static func decode(_ coded: [UInt8], as coding: ContentCoding, piece: Int) throws -> (chunks: [ByteBuffer], finished: Bool) {
        let decoder = try coding.makeDecoder()
        var chunks: [ByteBuffer] = []
        var offset = 0
        while offset < coded.count {
            var input = ByteBuffer(bytes: coded[offset..<min(offset + piece, coded.count)])
            try decoder.decode(&input, allocator: ByteBufferAllocator()) { chunks.append($0) }
            #expect(input.readableBytes == 0)
            offset += piece
        }
        return (chunks, decoder.isFinished)
    }

    @Test(arguments: ContentCoding.allCases, [1, 977, 1 << 20])
    func aStreamFedInAnyPiecesDecodesWholeInBoundedChunks(coding: ContentCoding, piece: Int) throws {
        let coded = try Self.coded(coding)
        let (chunks, finished) = try Self.decode(coded, as: coding, piece: piece)
        #expect(finished)
        #expect(chunks.flatMap { Array($0.readableBytesView) } == Self.plain)
        #expect(chunks.allSatisfy { $0.readableBytes <= 64 * 1024 && $0.readableBytes > 0 })
    }

    @Test(arguments: ContentCoding.allCases)
    func aCutStreamIsNotFinishedAndTrailingBytesFail(coding: ContentCoding) throws {
        let coded = try Self.coded(coding)
        #expect(try Self.decode(Array(coded.dropLast(5)), as: coding, piece: 4096).finished == false)
        #expect(throws: ContentDecodingError.self) { try Self.decode(coded + [0x01, 0x02, 0x03, 0x04], as: coding, piece: 4096) }
    }

    @Test(arguments: ContentCoding.allCases)
    func garbageFails(coding: ContentCoding) {
        #expect(throws: ContentDecodingError.malformed) {
            try Self.decode(Array("HTTP/1.1 200 OK, not a coded body at all".utf8), as: coding, piece: 64)
        }
    }

    /// A Zstandard frame announcing a window over 8 MiB fails at its header, before the window is
    /// allocated; one of 8 MiB is accepted.
    @Test func aZstandardWindowOver8MiBIsRefusedBeforeItIsAllocated() throws {
        // Magic number, a frame header descriptor with nothing set, then the window descriptor:
        // exponent 17 (a 128 MiB window) or 13 (8 MiB), mantissa 0.
        let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00]
        #expect(throws: ContentDecodingError.malformed) { try Self.decode(magic + [17 << 3], as: .zstd, piece: 64) }
        #expect(try Self.decode(magic + [13 << 3], as: .zstd, piece: 64).finished == false)
    }

    @Test func theBudgetHoldsTheRatio() throws {
        var budget = ContentDecodingBudget(ratio: 10)
        budget.received(coded: 100)
        try budget.produced(decoded: 1000)
        #expect(throws: ContentDecodingError.limitExceeded) { try budget.produced(decoded: 1) }
        var unlimited = ContentDecodingBudget(ratio: nil)
        try unlimited.produced(decoded: Int.max / 2)
        // A ratio whose limit passes Int.max is no limit, not a negative one.
        var huge = ContentDecodingBudget(ratio: .max)
        huge.received(coded: 2)
        try huge.produced(decoded: 1 << 40)
    }

    /// The handler decodes a coded response, passes others through, and fails a cut one.
    @Test func theHandlerDecodesPassesThroughAndFailsACutBody() throws {
        let channel = EmbeddedChannel(handler: ContentDecodingHandler(ratio: 100))
        let coded = try Self.coded(.zstd)
        try channel.writeInbound(
            HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Encoding": "zstd"])))
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(bytes: coded)))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        var decoded: [UInt8] = []
        var ended = false
        while let part = try channel.readInbound(as: HTTPClientResponsePart.self) {
            switch part {
            case .head(let head): #expect(head.headers["Content-Encoding"] == ["zstd"])
            case .body(let buffer): decoded += buffer.readableBytesView
            case .end: ended = true
            }
        }
        #expect(decoded == Self.plain)
        #expect(ended)

        // Another coding, and a body coded twice (in two header lines), go through as they came.
        try Self.expectPassedThrough(channel, headers: ["Content-Encoding": "identity"], body: "as is")
        try Self.expectPassedThrough(
            channel, headers: HTTPHeaders([("Content-Encoding", "br"), ("Content-Encoding", "gzip")]), body: "twice")

        // A HEAD's empty body is empty; a cut one fails.
        try channel.writeInbound(
            HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Encoding": "br"])))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        _ = try channel.readInbound(as: HTTPClientResponsePart.self)
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .end(nil))
        try channel.writeInbound(
            HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Encoding": "br"])))
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(bytes: try Self.coded(.brotli).prefix(100))))
        #expect(throws: ContentDecodingError.truncated) { try channel.writeInbound(HTTPClientResponsePart.end(nil)) }
        _ = try? channel.finish()
    }

    /// Sends a response through the handler and expects its head, body and end back unchanged.
    static func expectPassedThrough(_ channel: EmbeddedChannel, headers: HTTPHeaders, body: String) throws {
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        try channel.writeInbound(HTTPClientResponsePart.head(head))
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: body)))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .head(head))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .body(ByteBuffer(string: body)))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .end(nil))
    }

    @Test(arguments: ["brotli", "zstd"], [false, true])
    func codedResponsesAreDecoded(path: String, overHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: overHTTP2)) { server async throws in
            let transport = makeTransport { configuration in
                if let certificates = server.certificates {
                    configuration.tls.trustsSystemRoots = false
                    configuration.tls.additionalTrustRoots = [certificates.certificateAuthority.certificateDER]
                }
            }
            defer { transport.shutdown() }
            let url = overHTTP2 ? try #require(server.tlsURL(.valid, "/\(path)")) : server.url("/\(path)")
            let fetched = try await transport.fetch(url)
            #expect(fetched.status == 200)
            #expect(fetched.json[path] as? Bool == true)
            #expect(fetched.metrics.responseBodyBytesAfterDecoding == Int64(fetched.body.readableBytes))
            #expect(fetched.metrics.responseBodyBytesReceived < fetched.metrics.responseBodyBytesAfterDecoding)
        }
    }

    @Test(arguments: ["br", "zstd"])
    func aLargeCodedBodyStreamsWhole(coding: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            defer { transport.shutdown() }
            let fetched = try await transport.fetch(server.url("/coded/\(coding)/3000000?seed=11"))
            var generator = SeededBytes(seed: 11)
            #expect(fetched.body.readableBytes == 3_000_000)
            #expect(Array(fetched.body.readableBytesView) == generator.next(3_000_000))
        }
    }

    @Test(arguments: ["brotli-bomb", "zstd-bomb"])
    func aBombPastTheRatioFails(path: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            defer { transport.shutdown() }
            let error = await transportError { try await transport.fetch(server.url("/\(path)")) }
            #expect(error?.code == .dataLengthExceedsMaximum)
            // With the limit off the body is left as it came.
            let raw = makeTransport { $0.maximumDecompressionRatio = nil }
            defer { raw.shutdown() }
            let fetched = try await raw.fetch(server.url("/\(path)"))
            #expect(fetched.body.readableBytes < 1 << 20)
        }
    }
}
#endif
