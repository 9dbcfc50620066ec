import AlamofireNIO
import AlamofireNIOLoading
import AlamofireNIOTransport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// One fuzz target per parser that reads bytes from a server or a user. Each must return for every
/// input without trapping, without memory growing past what the input explains, and in time linear in
/// the input; libFuzzer's `-timeout` and `-rss_limit_mb` and AddressSanitizer catch the rest.
enum FuzzTargets {
    typealias Target = @Sendable (UnsafeRawBufferPointer) -> Void

    /// The target this run feeds; set once, before the first input.
    nonisolated(unsafe) static var selected: Target?

    static let all: [String: Target] = [
        "set-cookie": setCookie,
        "www-authenticate": wwwAuthenticate,
        "cache-control": cacheControl,
        "content-range": contentRange,
        "resume-data": resumeData,
        "server-sent-events": serverSentEvents,
        "multipart": multipart,
        "netlink": netlink,
        "certificates": certificates,
        "websocket-deflate": webSocketDeflate,
        "socks5-reply": socks5Reply,
        "connect-response": connectResponse,
        "brotli": decoding(.brotli),
        "zstd": decoding(.zstd),
    ]

    private static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Lines of the input: several header values, say.
    private static func lines(_ bytes: UnsafeRawBufferPointer) -> [String] {
        text(bytes).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private static let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// The input cut in two where its first byte says: a peer's bytes arriving in two reads.
    private static func halves(_ bytes: UnsafeRawBufferPointer) -> (UnsafeRawBufferPointer.SubSequence, UnsafeRawBufferPointer.SubSequence)
    {
        let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        return (bytes[..<cut], bytes[cut...])
    }

    /// A `Set-Cookie` value, and its dates as cookie dates.
    static let setCookie: Target = { bytes in
        let header = text(bytes)
        _ = SetCookie(header, now: now)
        _ = CookieDate.parse(header)
    }

    /// `WWW-Authenticate` values, one per line: Basic, Digest and any other scheme's challenges.
    static let wwwAuthenticate: Target = { bytes in
        for offer in AuthenticationChallengeOffer.parse(lines(bytes)) { _ = offer.parameters["qop"] }
    }

    /// A `Cache-Control` value, and the same text as every header a stored response's freshness reads.
    static let cacheControl: Target = { bytes in
        let value = text(bytes)
        _ = CacheControl(value).seconds("max-age")
        let headers = ["Cache-Control": value, "Expires": value, "Date": value, "Last-Modified": value, "Age": value]
        _ = CacheFreshness(headers: headers, statusCode: 200, requestTime: now, responseTime: now)
    }

    /// A `206`'s `Content-Range`.
    static let contentRange: Target = { bytes in
        _ = DownloadResumption.parseContentRange(text(bytes))
    }

    /// Resume data handed back by a user.
    static let resumeData: Target = { bytes in
        _ = try? DownloadResumption(decoding: Data(bytes), temporaryDirectory: FileManager.default.temporaryDirectory)
    }

    /// A `text/event-stream` body, cut in two where its first byte says, with a small size limit.
    static let serverSentEvents: Target = { bytes in
        var parser = ServerSentEventParser(maximumEventSize: 4096)
        let (first, second) = halves(bytes)
        _ = try? parser.parse(Data(first))
        _ = try? parser.parse(Data(second))
        _ = parser.finish()
    }

    /// A multipart form whose field names, file names, MIME types and boundary come from the input.
    static let multipart: Target = { bytes in
        let fields = lines(bytes)
        let form = MultipartFormData(boundary: fields.first)
        for field in fields.dropFirst() {
            let parts = field.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            form.append(
                Data(parts.last?.utf8 ?? "".utf8), withName: parts[0], fileName: parts.count > 1 ? parts[1] : nil,
                mimeType: parts.count > 2 ? parts[2] : nil)
        }
        _ = try? form.encode()
    }

    /// Messages read from an rtnetlink socket.
    static let netlink: Target = { bytes in
        _ = RTNetlink.parse(Array(bytes))
    }

    /// Certificates and identities a user loads: DER, PEM, PKCS#12.
    static let certificates: Target = { bytes in
        let data = Data(bytes)
        _ = try? SecCertificate(derEncoded: data)
        _ = try? SecCertificate.certificates(pemEncoded: text(bytes))
        _ = try? SecIdentity(pkcs12Data: data, password: "password")
        _ = try? SecKey(subjectPublicKeyInfo: data)
    }

    /// A WebSocket handshake's `Sec-WebSocket-Extensions` answer (the first line), then a compressed
    /// message inflated with a 64 KiB limit.
    static let webSocketDeflate: Target = { bytes in
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let answer = String(decoding: bytes[..<newline], as: UTF8.self)
        let parameters: PerMessageDeflateParameters
        switch PerMessageDeflateParameters.negotiated(by: [answer]) {
        case .success(let negotiated?): parameters = negotiated
        default: parameters = PerMessageDeflateParameters()
        }
        guard let codec = PerMessageDeflate.make(parameters) else { return }
        let payload = ByteBuffer(bytes: bytes[min(newline + 1, bytes.endIndex)...])
        _ = try? codec.decompress(payload, limit: 64 * 1024, allocator: ByteBufferAllocator())
    }

    /// A `br` or `zstd` body after a first byte that says where it is cut in two, decoded with the
    /// ratio limit the transport uses. A build without the coding's trait does nothing.
    static func decoding(_ coding: ContentCoding) -> Target {
        { bytes in
            guard coding.isDecodable, let decoder = try? coding.makeDecoder(), let first = bytes.first else { return }
            let body = bytes.dropFirst()
            let cut = body.startIndex + Int(first) % (body.count + 1)
            var budget = ContentDecodingBudget(ratio: 100)
            for piece in [body[..<cut], body[cut...]] {
                var input = ByteBuffer(bytes: piece)
                budget.received(coded: input.readableBytes)
                do {
                    try decoder.decode(&input, allocator: ByteBufferAllocator()) { try budget.produced(decoded: $0.readableBytes) }
                } catch {
                    return
                }
            }
            _ = decoder.isFinished
        }
    }

    /// A SOCKS5 proxy's answers to the handshake, in two reads, with and without credentials (over-long
    /// ones when the input's length is odd).
    static let socks5Reply: Target = { bytes in
        let (first, second) = halves(bytes)
        let long = String(repeating: "u", count: 200 + bytes.count % 2 * 100)
        for credentials in [nil, TransportProxy.Credentials(user: long, password: "p")] {
            var handshake = SOCKS5Handshake(target: .name("origin.test", port: 443), credentials: credentials)
            var actions = [handshake.start()]
            actions.append(handshake.receive(first))
            actions.append(handshake.receive(second))
            for case .established(let leftOver) in actions { precondition(leftOver.count <= bytes.count) }
        }
    }

    /// An HTTP proxy's answer to `CONNECT`, in two reads, through the decoder and handler a tunnel
    /// uses: whatever arrives, the tunnel's promise is settled, never left pending.
    static let connectResponse: Target = { bytes in
        let channel = EmbeddedChannel()
        let result = channel.eventLoop.makePromise(of: Void.self)
        let proxy = TransportProxy(kind: .http, host: "proxy.test", port: 3128)
        let (first, second) = halves(bytes)
        do {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)))
            try channel.pipeline.syncOperations.addHandler(
                ConnectTunnelHandler(authority: "origin.test:443", headers: ["Host": "origin.test:443"], proxy: proxy, result: result))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
            try channel.writeInbound(ByteBuffer(bytes: first))
            try channel.writeInbound(ByteBuffer(bytes: second))
        } catch {
            // A decoding error closes the channel; the handler has settled the promise.
        }
        _ = try? channel.finish()
        // A channel the handler closed is past `finish()`'s own close: the pipeline's removal is a
        // task queued on the embedded loop, which only runs when asked (left queued, it would keep
        // the channel and its buffers alive).
        channel.embeddedEventLoop.run()
        let settled = NIOLockedValueBox(false)
        result.futureResult.whenComplete { _ in settled.withLockedValue { $0 = true } }
        precondition(settled.withLockedValue { $0 }, "the CONNECT tunnel's promise was left pending")
    }
}

/// libFuzzer's entry point by name, for its own runtime (which refers to it); the driver is given the
/// same function through `af_fuzz_main`.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzTargets.selected?(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
