import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AlamofireNIOTransport

/// The `CONNECT` handler on an `EmbeddedChannel`: what it sends, and how it reads each answer.
@Suite struct ConnectTunnelHandlerTests {
    let proxy = TransportProxy(kind: .http, host: "proxy.test", port: 3128)

    /// A channel with the handler added, its result promise, and the CONNECT it sent.
    func start(credentials: TransportProxy.Credentials? = nil) throws -> (EmbeddedChannel, EventLoopFuture<Void>, HTTPRequestHead) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        let result = channel.eventLoop.makePromise(of: Void.self)
        var headers = HTTPHeaders([("Host", "origin.test:443")])
        if let credentials { headers.add(name: "Proxy-Authorization", value: credentials.basicAuthorization) }
        try channel.pipeline.syncOperations.addHandler(
            ConnectTunnelHandler(authority: "origin.test:443", headers: headers, proxy: proxy, result: result))
        guard case .head(let head) = try channel.readOutbound(as: HTTPClientRequestPart.self) else {
            throw TransportError(.unknown, "no CONNECT head")
        }
        #expect(try channel.readOutbound(as: HTTPClientRequestPart.self) == .end(nil))
        return (channel, result.futureResult, head)
    }

    enum Outcome: Equatable {
        case pending
        case opened
        case failed(URLError.Code, String)
    }

    /// Where the tunnel's result stands.
    func outcome(_ future: EventLoopFuture<Void>, _ channel: EmbeddedChannel) -> Outcome {
        channel.embeddedEventLoop.run()
        let settled = NIOLockedValueBox(Outcome.pending)
        future.whenComplete { result in
            settled.withLockedValue {
                switch result {
                case .success: $0 = .opened
                case .failure(let error as TransportError): $0 = .failed(error.code, error.message)
                case .failure(let error): $0 = .failed(.unknown, "\(error)")
                }
            }
        }
        return settled.withLockedValue { $0 }
    }

    func failure(_ future: EventLoopFuture<Void>, _ channel: EmbeddedChannel) -> (code: URLError.Code, message: String)? {
        guard case .failed(let code, let message) = outcome(future, channel) else { return nil }
        return (code, message)
    }

    @Test func sendsConnectWithTheAuthorityHostAndCredentials() throws {
        let (_, _, head) = try start(credentials: .init(user: "u", password: "p"))
        #expect(head.method == .CONNECT)
        #expect(head.uri == "origin.test:443")
        #expect(head.headers.first(name: "Host") == "origin.test:443")
        #expect(head.headers.first(name: "Proxy-Authorization") == "Basic dTpw")
    }

    @Test func anyTwoHundredOpensTheTunnelAtTheEndOfTheHead() throws {
        let (channel, result, _) = try start()
        try channel.writeInbound(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: 299))))
        #expect(outcome(result, channel) == .pending)
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        #expect(outcome(result, channel) == .opened)
        #expect(channel.isActive)
    }

    @Test(arguments: [
        (407, URLError.Code.userAuthenticationRequired, "(407)"), (403, .cannotConnectToHost, "(403)"),
        (502, .cannotConnectToHost, "(502)"),
    ])
    func aRefusalFailsAndCloses(status: Int, code: URLError.Code, mention: String) throws {
        let (channel, result, _) = try start()
        try channel.writeInbound(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status))))
        let error = try #require(failure(result, channel))
        #expect(error.code == code)
        #expect(error.message.contains(mention))
        #expect(error.message.contains("origin.test:443"))
        #expect(!channel.isActive)
    }

    @Test func aBodyWithTheAnswerIsABadResponse() throws {
        let (channel, result, _) = try start()
        try channel.writeInbound(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: "hello")))
        #expect(failure(result, channel)?.code == .badServerResponse)
    }

    @Test func aParserErrorIsABadResponseAndACloseIsALostConnection() throws {
        let (garbled, garbledResult, _) = try start()
        garbled.pipeline.fireErrorCaught(HTTPParserError.invalidStatus)
        #expect(failure(garbledResult, garbled)?.code == .badServerResponse)
        let (closed, closedResult, _) = try start()
        closed.pipeline.fireChannelInactive()
        #expect(failure(closedResult, closed)?.code == .networkConnectionLost)
    }

    /// A `Proxy-Authorization` that could split the `CONNECT` (a Digest answer carries the user name
    /// as given) fails the tunnel before anything is written, as the caller's mistake.
    @Test func aConnectThatCouldSplitIsNeverSent() async throws {
        let origin = try Origin(url: URL(string: "https://origin.test/")!, proxy: proxy)
        for authorization in ["Digest username=\"a\r\nX-Injected: 1\"", "a\u{0}b"] {
            // Its event loop runs what `open` submits without being driven.
            let channel = NIOAsyncTestingChannel()
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).get()
            let error = await #expect(throws: TransportError.self) {
                try await ProxyTunnel.open(on: channel, to: origin, through: self.proxy, authorization: authorization, socksTarget: nil)
            }
            #expect(error?.code == .badURL)
            #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)
            #expect(try await channel.readOutbound(as: HTTPClientRequestPart.self) == nil)
        }
    }
}
