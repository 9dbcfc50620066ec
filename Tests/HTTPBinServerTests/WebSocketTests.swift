import HTTPBinServer
import NIOCore
import NIOPosix
import Testing

/// Speaks RFC 6455 by hand over a raw TCP connection, so the test depends on no WebSocket client.
@Suite struct WebSocketTests {
    @Test func echoReturnsTextAndBinaryMessages() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: server.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            try await channel.executeThenClose { inbound, outbound in
                var reader = ByteReader(iterator: inbound.makeAsyncIterator())
                // The key and accept value are RFC 6455's own example (section 1.3).
                try await outbound.write(
                    ByteBuffer(
                        string: [
                            "GET /websocket/echo HTTP/1.1", "Host: 127.0.0.1:\(server.port)", "Upgrade: websocket", "Connection: Upgrade",
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13", "", "",
                        ].joined(separator: "\r\n")))
                let handshake = try await reader.readUntil(Array("\r\n\r\n".utf8))
                #expect(handshake.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
                #expect(handshake.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo=\r\n"))

                for (opcode, payload) in [(UInt8(0x1), Array("hello, echo".utf8)), (UInt8(0x2), [0, 1, 2, 255])] {
                    let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
                    var frame: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
                    frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
                    try await outbound.write(ByteBuffer(bytes: frame))
                    let header = try await reader.read(2)
                    #expect(header == [0x80 | opcode, UInt8(payload.count)])
                    #expect(try await reader.read(payload.count) == payload)
                }
            }
        }
    }
}

/// Reads exact byte counts from an inbound stream of buffers.
struct ByteReader {
    var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    var pending: [UInt8] = []

    mutating func read(_ count: Int) async throws -> [UInt8] {
        while pending.count < count {
            guard let buffer = try await iterator.next() else { throw TestClientError.connectionClosed }
            pending += buffer.readableBytesView
        }
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    mutating func readUntil(_ terminator: [UInt8]) async throws -> String {
        while true {
            if let range = pending.firstRange(of: terminator) {
                defer { pending.removeSubrange(..<range.upperBound) }
                return String(decoding: pending[..<range.upperBound], as: UTF8.self)
            }
            guard let buffer = try await iterator.next() else { throw TestClientError.connectionClosed }
            pending += buffer.readableBytesView
        }
    }
}
