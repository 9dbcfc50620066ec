@_spi(WebSocket) import AlamofireNIO
import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W10: WebSocket echo round trips against the bundled `WebSocketTestServer` (in this process),
/// through AlamofireNIO's `WebSocketTask` and through a plain NIOWebSocket client, the baseline.
/// W10 is one socket's round trips one after another; W10P is 64 sockets doing the same at once.
protocol WebSocketEchoClient: Sendable {
    var name: String { get }
    /// Opens a WebSocket to `url`, sends `count` text messages one after another, each after the
    /// echo of the one before, then closes.
    func roundTrips(_ url: URL, count: Int) async throws
}

struct AlamofireNIOWebSocketClient: WebSocketEchoClient {
    let name = "AlamofireNIO"
    let session = Session(eventMonitors: [])

    func roundTrips(_ url: URL, count: Int) async throws {
        let task = session.webSocketRequest(to: url).webSocketTask()
        var echoes = task.streamingMessages().makeAsyncIterator()
        for index in 0..<count {
            try await task.send(.string("message \(index)"))
            guard case .string = await echoes.next() else { throw UnexpectedResponse(description: "no echo of message \(index)") }
        }
        task.close(sending: .normalClosure)
    }
}

/// The baseline: NIO's WebSocket client upgrader, and a handler that completes a promise per echo.
/// With `awaitsWrites`, it also awaits each message's write before awaiting its echo, as Alamofire's
/// `send` does (it returns once the message is written): the experiment that bounds what that costs.
struct NIOWebSocketEchoClient: WebSocketEchoClient {
    var awaitsWrites = false
    var name: String { awaitsWrites ? "NIOWebSocket+writes" : "NIOWebSocket" }

    func roundTrips(_ url: URL, count: Int) async throws {
        let echoes = NIOLockedValueBox<EventLoopPromise<Void>?>(nil)
        let upgraded = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: (any Channel).self)
        let host = url.host ?? "127.0.0.1"
        let port = url.port ?? 80
        let path = url.path.isEmpty ? "/" : url.path
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                let upgrader = NIOWebSocketClientUpgrader { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(EchoReceiver(echoes: echoes))
                        upgraded.succeed(channel)
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes, withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(UpgradeRequester(host: "\(host):\(port)", path: path))
                }
            }
            .connect(host: host, port: port).get()
        defer { channel.close(promise: nil) }
        // A refused upgrade ends the connection: the wait ends with it (an upgrade done first wins).
        channel.closeFuture.whenComplete { _ in upgraded.fail(UnexpectedResponse(description: "the WebSocket upgrade failed")) }
        let socket = try await upgraded.futureResult.get()
        for index in 0..<count {
            let echo = socket.eventLoop.makePromise(of: Void.self)
            echoes.withLockedValue { $0 = echo }
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: "message \(index)"))
            if awaitsWrites { try await socket.writeAndFlush(frame) } else { socket.writeAndFlush(frame, promise: nil) }
            try await echo.futureResult.get()
        }
        var code = ByteBuffer()
        code.write(webSocketErrorCode: .normalClosure)
        try await socket.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: code))
    }

    /// Sends the upgrade request once the connection is up.
    private final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let host: String
        let path: String

        init(host: String, path: String) {
            self.host = host
            self.path = path
        }

        func channelActive(context: ChannelHandlerContext) {
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: ["Host": host, "Content-Length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }

    /// Completes the waiting promise with each text frame.
    private final class EchoReceiver: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        let echoes: NIOLockedValueBox<EventLoopPromise<Void>?>

        init(echoes: NIOLockedValueBox<EventLoopPromise<Void>?>) {
            self.echoes = echoes
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard unwrapInboundIn(data).opcode == .text else { return }
            echoes.withLockedValue { echo in
                defer { echo = nil }
                return echo
            }?.succeed()
        }
    }
}

enum WebSocketWorkloads {
    static let clientNames = ["AlamofireNIO", "NIOWebSocket", "NIOWebSocket+writes"]

    static func makeClient(_ name: String) -> any WebSocketEchoClient {
        switch name {
        case "AlamofireNIO": AlamofireNIOWebSocketClient()
        case "NIOWebSocket+writes": NIOWebSocketEchoClient(awaitsWrites: true)
        default: NIOWebSocketEchoClient()
        }
    }

    /// One run of W10 (one socket) or W10P (64 sockets): echo round trips per second, all sockets together.
    static func run(_ id: String, client: any WebSocketEchoClient, url: URL, quick: Bool) async throws -> Double {
        let sockets = id == "W10P" ? 64 : 1
        let perSocket = (quick ? 2000 : 10000) / (id == "W10P" ? 16 : 1)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<sockets { group.addTask { try await client.roundTrips(url, count: perSocket) } }
            try await group.waitForAll()
        }
        let elapsed = start.duration(to: .now)
        return Double(sockets * perSocket) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Runs W10 and W10P (or the one asked for), interleaving the clients, and prints their medians
    /// with the ratio to the NIOWebSocket client.
    static func runTimed(options: Options) async throws {
        let ids: [String] = ["W10", "W10P"].filter { options.workload == nil || options.workload == $0 }
        guard !ids.isEmpty else { return }
        let names = clientNames.filter { options.client == nil || options.client == $0 }
        let server = try await WebSocketTestServer.start()
        defer { Task { try? await server.shutdown() } }
        let url = server.url("echo")
        let clients: [String: any WebSocketEchoClient] = Dictionary(uniqueKeysWithValues: names.map { ($0, Self.makeClient($0)) })
        let runs = options.quick ? 3 : 5
        for id in ids {
            // One untimed round warms each client's code paths.
            for name in names { _ = try await Self.run(id, client: clients[name]!, url: url, quick: true) }
            var samples: [String: [Double]] = [:]
            for _ in 0..<runs {
                for name in names {
                    samples[name, default: []].append(try await Self.run(id, client: clients[name]!, url: url, quick: options.quick))
                }
            }
            let title = id == "W10" ? "WebSocket echo round trips, one socket" : "WebSocket echo round trips, 64 sockets at once"
            print("\(id): \(title)")
            let baseline = samples["NIOWebSocket"].flatMap(median)
            for name in names {
                guard let values = samples[name], let value = median(values) else { continue }
                let ratio = baseline.map { String(format: "%.2f×", value / $0) } ?? "n/a"
                print(
                    String(
                        format: "  %@ %10.1f round trips/s  (min %.1f, max %.1f)  %@ NIOWebSocket",
                        name.padding(toLength: 20, withPad: " ", startingAt: 0) as NSString, value, values.min()!, values.max()!,
                        ratio as NSString))
            }
        }
    }
}
