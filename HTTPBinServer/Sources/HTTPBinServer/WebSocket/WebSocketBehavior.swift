import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// What each path of ``WebSocketTestServer`` does once upgraded.
enum WebSocketBehavior {
    static func path(of uri: String) -> String {
        let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
        return path.hasPrefix("/websocket/") ? String(path.dropFirst("/websocket/".count)) : path
    }

    static func query(of uri: String) -> [String: String] {
        guard let components = URLComponents(string: uri) else { return [:] }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return query
    }

    static let upgradedPaths: Set<String> = [
        "echo", "close", "stream", "headers", "protocol", "wrong-protocol", "fragmented", "silent", "invalid-utf8", "reserved-opcode",
        "masked", "long-ping", "truncated", "drop", "flaky", "set-cookie", "deflate",
    ]

    /// The extra header fields of the `101`, or nil to decline the upgrade.
    static func upgradeHeaders(for head: HTTPRequestHead, flaky: FlakyKeys) -> HTTPHeaders? {
        let path = path(of: head.uri)
        guard upgradedPaths.contains(path) else { return nil }
        var headers = HTTPHeaders()
        switch path {
        case "flaky":
            guard !flaky.firstSighting(of: query(of: head.uri)["key"] ?? "") else { return nil }
        case "protocol":
            let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
            if let first = offered.first { headers.add(name: "Sec-WebSocket-Protocol", value: first.trimmingCharacters(in: .whitespaces)) }
        case "wrong-protocol":
            headers.add(name: "Sec-WebSocket-Protocol", value: "never-offered")
        case "set-cookie":
            headers.add(name: "Set-Cookie", value: "websocket=opened; Path=/")
        case "deflate":
            if head.headers["Sec-WebSocket-Extensions"].contains(where: { $0.contains("permessage-deflate") }) {
                headers.add(
                    name: "Sec-WebSocket-Extensions", value: "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
            }
        default:
            break
        }
        return headers
    }

    static func install(on channel: any Channel, for head: HTTPRequestHead) throws {
        let pipeline = channel.pipeline.syncOperations
        // The refusals' handler sits where the frames now go.
        pipeline.removeHandler(try pipeline.handler(type: WebSocketRefusalHandler.self), promise: nil)
        try pipeline.addHandler(WebSocketBehaviorHandler(path: path(of: head.uri), head: head))
    }
}

/// Plays one path's part on an upgraded connection.
private final class WebSocketBehaviorHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let path: String
    private let head: HTTPRequestHead
    private var fragments = ByteBuffer()
    private var fragmentOpcode = WebSocketOpcode.text
    private var closed = false
    private var streamRemaining = 0
    private var streamSent = 0
    private var streamSize: Int?

    init(path: String, head: HTTPRequestHead) {
        self.path = path
        self.head = head
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let query = WebSocketBehavior.query(of: head.uri)
        switch path {
        case "close":
            send(.text, ByteBuffer(string: "closing"), context)
            let code = UInt16(query["code"] ?? "") ?? 1000
            var payload = ByteBuffer()
            payload.writeInteger(code)
            payload.writeString(query["reason"] ?? "")
            close(payload, context)
        case "stream":
            streamRemaining = Int(query["count"] ?? "") ?? 10
            streamSize = query["size"].flatMap { Int($0) }
            writeStream(context)
        case "headers":
            var fields: [String: String] = [:]
            for (name, value) in head.headers { fields[name.lowercased()] = value }
            let json = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
            send(.text, ByteBuffer(bytes: json), context)
        case "fragmented":
            context.write(wrapOutboundOut(WebSocketFrame(fin: false, opcode: .text, data: ByteBuffer(string: "hello"))), promise: nil)
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "between"))), promise: nil)
            context.write(wrapOutboundOut(WebSocketFrame(fin: false, opcode: .continuation, data: ByteBuffer(string: ", "))), promise: nil)
            send(.continuation, ByteBuffer(string: "world"), context)
            close(Self.code(1000), context)
        case "invalid-utf8":
            send(.text, ByteBuffer(bytes: [0x68, 0xFF, 0xFE]), context)
        case "reserved-opcode":
            send(WebSocketOpcode(encodedWebSocketOpcode: 0x3)!, ByteBuffer(string: "?"), context)
        case "masked":
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: "masked"))),
                promise: nil)
        case "long-ping":
            send(.ping, ByteBuffer(repeating: 0x61, count: 200), context)
        case "truncated":
            // A frame header promising 100 bytes, 10 of them, then the end of the connection: written
            // beneath the frame encoder.
            let channel = context.channel
            writeRaw([0x82, 100] + Array("0123456789".utf8), context)?.whenComplete { _ in channel.close(promise: nil) }
        case "drop":
            context.close(promise: nil)
        case "deflate":
            // RFC 7692 §7.2.3.1's "Hello", compressed, RSV1 set: written beneath the frame encoder.
            writeRaw([0xC1, 0x07, 0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], context)
        default:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard path != "silent", !closed else { return }
        if path == "deflate", frame.opcode == .text || frame.opcode == .binary {
            // Reports how the client framed its message (uncompressed: RSV1 is per message), then closes.
            let payload = frame.unmaskedData.readableBytesView.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            send(.text, ByteBuffer(string: "rsv1=\(frame.rsv1) payload=\(payload)"), context)
            return close(Self.code(1000), context)
        }
        switch frame.opcode {
        case .ping:
            send(.pong, frame.unmaskedData, context)
        case .connectionClose:
            close(frame.unmaskedData, context)
        case .text, .binary, .continuation:
            var data = frame.unmaskedData
            if frame.opcode != .continuation { fragmentOpcode = frame.opcode }
            fragments.writeBuffer(&data)
            guard frame.fin else { return }
            send(fragmentOpcode, fragments, context)
            fragments.clear()
        default:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if path == "stream" { writeStream(context) }
        context.fireChannelWritabilityChanged()
    }

    /// Writes `stream`'s messages while the connection takes them (a slow client holds the rest
    /// back, as a well-behaved server does), then closes with 1000.
    private func writeStream(_ context: ChannelHandlerContext) {
        guard !closed else { return }
        while streamRemaining > 0, context.channel.isWritable {
            let index = streamSent
            streamSent += 1
            streamRemaining -= 1
            let frame =
                if let size = streamSize {
                    WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(repeating: UInt8(index % 256), count: size))
                } else {
                    WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "message \(index)"))
                }
            context.write(wrapOutboundOut(frame), promise: nil)
        }
        context.flush()
        if streamRemaining == 0 { close(Self.code(1000), context) }
    }

    /// Writes `bytes` as they are, beneath the frame encoder: frames no encoder would make.
    @discardableResult
    private func writeRaw(_ bytes: [UInt8], _ context: ChannelHandlerContext) -> EventLoopFuture<Void>? {
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self) else { return nil }
        return encoder.writeAndFlush(NIOAny(ByteBuffer(bytes: bytes)))
    }

    private func send(_ opcode: WebSocketOpcode, _ data: ByteBuffer, _ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: data)), promise: nil)
    }

    /// Sends a close frame (or echoes the client's) and closes the connection once it is written.
    private func close(_ payload: ByteBuffer, _ context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private static func code(_ code: UInt16) -> ByteBuffer {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        return payload
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
