import AlamofireNIOTransport
import Crypto
import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1
import Testing

/// HTTP/2 against the bundled server, which offers `h2` by ALPN on its TLS port.
@Suite struct TransportHTTP2Tests {
    /// A transport that trusts the server's test CA.
    func transport(for server: HTTPBinServer, _ configure: (inout HTTPTransport.Configuration) -> Void = { _ in }) throws -> HTTPTransport {
        let certificates = try #require(server.certificates)
        return makeTransport { configuration in
            configuration.tls.trustsSystemRoots = false
            configuration.tls.additionalTrustRoots = [certificates.certificateAuthority.certificateDER]
            configure(&configuration)
        }
    }

    /// How many connections a busy origin's HTTP/2 streams spread over: one per event loop of the
    /// transport's, two at most.
    static func http2Connections(of transport: HTTPTransport) -> Int {
        min(2, transport.eventLoopGroup.makeIterator().reduce(0) { count, _ in count + 1 })
    }

    @Test func tlsNegotiatesHTTP2AndLaterStreamsReuseTheConnection() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let url = try #require(server.tlsURL(.valid, "/get"))
            let first = try await transport.fetch(url)
            #expect(first.status == 200)
            #expect(first.metrics.networkProtocolName == "h2")
            #expect(!first.metrics.isReusedConnection)
            #expect(first.metrics.secureConnectionStart != nil)
            #expect(first.metrics.responseBodyBytesReceived == Int64(first.body.readableBytes))
            let second = try await transport.fetch(url)
            #expect(second.metrics.networkProtocolName == "h2")
            #expect(second.metrics.isReusedConnection)
            #expect(second.metrics.connectStart == nil)
            #expect(server.statistics.acceptedConnections == 1)
        }
    }

    /// Over TLS a file body is read into buffers; a file that grows while it is sent still sends
    /// only the length announced in its head, as `sendfile` does on a plain connection.
    @Test func aFileThatGrowsWhileSentSendsWhatWasAnnounced() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let bytes = Data((0..<(3 << 19)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
            try bytes.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = TransportRequest(method: .PUT, url: try #require(server.tlsURL(.valid, "/upload")), body: .file(file))
            request.onUploadProgress = { sent, _ in
                // After the first 512 KiB read: the file grows by as much again.
                guard sent == 1 << 19, let handle = try? FileHandle(forWritingTo: file) else { return }
                handle.seekToEndOfFile()
                handle.write(Data(repeating: 0xEE, count: 1 << 19))
                try? handle.close()
            }
            let fetched = try await transport.fetch(request)
            #expect(fetched.status == 200)
            #expect(fetched.metrics.networkProtocolName == "h2")
            #expect(fetched.json["bytes"] as? Int == bytes.count)
            #expect(fetched.json["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test func http2CanBeTurnedOff() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server) { $0.allowsHTTP2 = false }
            defer { transport.shutdown() }
            let fetched = try await transport.fetch(try #require(server.tlsURL(.valid, "/get")))
            #expect(fetched.metrics.networkProtocolName == "http/1.1")
        }
    }

    /// At most two connections (one per event loop of the transport's, two at most): once one
    /// carries eight streams, a second opens on another loop and takes its share.
    @Test func twoHundredConcurrentRequestsShareAtMostTwoConnections() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let url = try #require(server.tlsURL(.valid, "/get"))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await transport.fetch(url).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 200))
            #expect(server.statistics.acceptedConnections == Self.http2Connections(of: transport))
            #expect(server.statistics.totalRequests == 200)
        }
    }

    /// A sustained load (each finished request replaced by a new one) stays on the same
    /// connections: no connection is opened once the second has.
    @Test func aSustainedLoadOfAHundredInFlightStaysOnTheSameConnections() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let url = try #require(server.tlsURL(.valid, "/get"))
            let total = 3000
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                var started = 0
                for _ in 0..<100 {
                    group.addTask { (try? await transport.fetch(url).status) == 200 ? 0 : 1 }
                    started += 1
                }
                var failures = 0
                while let failed = try await group.next() {
                    failures += failed
                    if started < total {
                        group.addTask { (try? await transport.fetch(url).status) == 200 ? 0 : 1 }
                        started += 1
                    }
                }
                return failures
            }
            #expect(failures == 0)
            #expect(server.statistics.acceptedConnections == Self.http2Connections(of: transport))
            #expect(server.statistics.totalRequests == total)
        }
    }

    /// A consumer that stops reading holds back its own stream's window only.
    @Test func aStuckStreamDoesNotStallAnotherOnTheSameConnection() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let large = try #require(server.tlsURL(.valid, "/stream-bytes/16000000?chunk_size=65536"))
            let stuck = try await transport.execute(TransportRequest(url: large))
            #expect(stuck.head.status == .ok)
            // The stuck body is never read; a second exchange on the same connection still completes.
            let other = try await transport.fetch(try #require(server.tlsURL(.valid, "/bytes/100000")))
            #expect(other.status == 200)
            #expect(other.body.readableBytes == 100_000)
            #expect(other.metrics.isReusedConnection)
            #expect(server.statistics.acceptedConnections == 1)
            // Reading resumes the stuck stream to its end.
            let body = try await stuck.body.collect()
            #expect(body.readableBytes == 16_000_000)
        }
    }

    /// Cancelling resets the stream alone: the connection and its other streams carry on.
    @Test func cancellingAnExchangeResetsItsStreamOnly() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            let slow = try #require(server.tlsURL(.valid, "/hold/never"))
            let neighbour = Task { try await transport.fetch(try #require(server.tlsURL(.valid, "/hold/neighbour"))) }
            let cancelled = Task { try await transport.fetch(slow) }
            try await server.waitUntil { $0.heldRequests == ["never": 1, "neighbour": 1] }
            cancelled.cancel()
            let error = await transportError { try await cancelled.value }
            #expect(error?.code == .cancelled)
            // The reset stream's request is let go; its neighbour is still held, then answered.
            try await server.waitUntil { $0.heldRequests == ["neighbour": 1] }
            server.release("neighbour")
            #expect(try await neighbour.value.status == 200)
            let after = try await transport.fetch(try #require(server.tlsURL(.valid, "/get")))
            #expect(after.metrics.isReusedConnection)
            #expect(server.statistics.acceptedConnections == 1)
        }
    }

    @Test func uploadsHonourThePeersWindow() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server)
            defer { transport.shutdown() }
            // Larger than any window the server grants at once.
            let payload = ByteBuffer(repeating: UInt8(ascii: "x"), count: 3_000_000)
            let fetched = try await transport.fetch(
                TransportRequest(
                    method: .POST, url: try #require(server.tlsURL(.valid, "/upload")),
                    body: .stream(length: nil) { writer in
                        var rest = payload
                        while rest.readableBytes > 0, let chunk = rest.readSlice(length: min(65_536, rest.readableBytes)) {
                            try await writer.write(chunk)
                        }
                    }))
            #expect(fetched.status == 200)
            #expect(fetched.metrics.networkProtocolName == "h2")
            #expect(fetched.json["bytes"] as? Int == 3_000_000)
        }
    }
}
