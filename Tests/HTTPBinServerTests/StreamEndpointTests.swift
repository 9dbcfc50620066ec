import Crypto
import Foundation
import NIOHTTP1
import Synchronization
import TestWaits
import Testing

@testable import HTTPBinServer

@Suite struct StreamEndpointTests {
    @Test func seededBytesAreReproducible() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/bytes/100000?seed=42"))
            var generator = SeededBytes(seed: 42)
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "100000")
            #expect(response.header("Content-Type") == "application/octet-stream")
            #expect(response.body == generator.next(100_000))
        }
    }

    @Test func seededBytesDoNotDependOnChunking() {
        var whole = SeededBytes(seed: 7)
        var pieces = SeededBytes(seed: 7)
        let expected = whole.next(1000)
        let chunked = pieces.next(3) + pieces.next(13) + pieces.next(984)
        #expect(chunked == expected)
    }

    @Test func streamBytesAreChunked() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/stream-bytes/5000?seed=3&chunk_size=1000"))
            var generator = SeededBytes(seed: 3)
            #expect(response.header("Transfer-Encoding") == "chunked")
            #expect(response.header("Content-Length") == nil)
            #expect(response.body == generator.next(5000))
        }
    }

    @Test func streamSendsOneJSONLinePerItem() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/stream/3"))
            let lines = response.text.split(separator: "\n")
            #expect(lines.count == 3)
            let ids = lines.compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
            }
            #expect(ids == [0, 1, 2])
        }
    }

    @Test func dripSendsAsterisksWithStatus() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/drip?numbytes=5&duration=0&delay=0&code=201"))
            #expect(response.status == 201)
            #expect(response.text == "*****")
            #expect(response.header("Content-Length") == "5")
        }
    }

    @Test func delayZeroAnswersLikeAnything() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/delay/0?x=1"), .POST, body: .bytes(Array("body".utf8)))
            #expect(response.json["data"] as? String == "body")
            #expect(response.json["args"] as? [String: String] == ["x": "1"])
        }
    }

    /// A held request waits, counted, until its gate opens; later requests at an open gate go on at once.
    @Test func holdAnswersOnceItsGateIsReleased() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let held = Task { try await fetch(server.url("/hold/a?x=1")) }
            try await server.waitUntil(within: .seconds(10)) { $0.heldRequests == ["a": 1] }
            server.release("b")
            #expect(server.statistics.heldRequests == ["a": 1])
            server.release("a")
            let response = try await withTimeout { try await held.value }
            #expect(response.status == 200)
            #expect(response.json["args"] as? [String: String] == ["x": "1"])
            #expect(server.statistics.heldRequests == [:])
            let later = try await withTimeout { try await fetch(server.url("/hold/a")) }
            #expect(later.status == 200)
        }
    }

    /// A held request ends when its client leaves, and is no longer counted.
    @Test func aHeldRequestWhoseClientLeavesIsNoLongerCounted() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let held = Task { try await fetch(server.url("/hold/gone")) }
            try await server.waitUntil(within: .seconds(10)) { $0.heldRequests == ["gone": 1] }
            held.cancel()
            _ = try await withTimeout { await held.result }
            try await server.waitUntil(within: .seconds(10)) { $0.heldRequests.isEmpty && $0.openConnections == 0 }
        }
    }

    /// `hold_at` stops a whole body after exactly that many bytes until the gate opens; a range is not held.
    @Test func aRangeHeldAtAnOffsetSendsTheRestOnceReleased() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let partial = try await withTimeout {
                try await fetch(server.url("/range/30?chunk_size=4&hold=r&hold_at=10"), headers: [("Range", "bytes=20-")])
            }
            #expect(partial.status == 206 && partial.text == "uvwxyzabcd")
            let received = ReceivedBytes()
            let whole = Task {
                try await TestConnection.with(server.url("/")) { connection in
                    try await connection.send(.GET, "/range/30?chunk_size=4&hold=r&hold_at=10") { received.add($0) }
                }
            }
            try await server.waitUntil(within: .seconds(10)) { $0.heldRequests == ["r": 1] }
            try await received.waitFor(10)
            #expect(received.count == 10)
            server.release("r")
            let response = try await withTimeout { try await whole.value }
            #expect(response.status == 200)
            #expect(response.text == "abcdefghijklmnopqrstuvwxyzabcd")
        }
    }

    /// Held before its first byte, a body still sends its head's promise in full once released; a
    /// hold outside the body is refused.
    @Test func aRangeHeldAtZeroSendsEverythingOnceReleasedAndAHoldOutsideIsRefused() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let whole = Task { try await fetch(server.url("/range/30?hold=z&hold_at=0")) }
            try await server.waitUntil(within: .seconds(10)) { $0.heldRequests == ["z": 1] }
            server.release("z")
            let response = try await withTimeout { try await whole.value }
            #expect(response.status == 200 && response.text == "abcdefghijklmnopqrstuvwxyzabcd")
            for query in ["hold=y", "hold=y&hold_at=30", "hold=y&hold_at=-1"] {
                #expect(try await fetch(server.url("/range/30?\(query)")).status == 400)
            }
        }
    }

    @Test func rangeWithoutRangeHeaderIsWhole() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/range/30"))
            #expect(response.status == 200)
            #expect(response.text == "abcdefghijklmnopqrstuvwxyzabcd")
            #expect(response.header("ETag") == "\"range30\"")
            #expect(response.header("Accept-Ranges") == "bytes")
        }
    }

    @Test(arguments: [
        ("bytes=5-9", "fghij", "bytes 5-9/30"),
        ("bytes=25-", "zabcd", "bytes 25-29/30"),
        ("bytes=-3", "bcd", "bytes 27-29/30"),
        ("bytes=28-100", "cd", "bytes 28-29/30"),
    ])
    func rangeAnswersPartialContent(range: String, body: String, contentRange: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/range/30"), headers: [("Range", range)])
            #expect(response.status == 206)
            #expect(response.text == body)
            #expect(response.header("Content-Range") == contentRange)
            #expect(response.header("Content-Length") == String(body.count))
        }
    }

    @Test func unsatisfiableRangeIs416() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/range/30"), headers: [("Range", "bytes=30-40")])
            #expect(response.status == 416)
            #expect(response.header("Content-Range") == "bytes */30")
        }
    }

    @Test func ifRangeMismatchSendsWholeBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let stale = try await fetch(server.url("/range/26"), headers: [("Range", "bytes=20-"), ("If-Range", "\"other\"")])
            #expect(stale.status == 200)
            #expect(stale.bodyCount == 26)
            let fresh = try await fetch(server.url("/range/26"), headers: [("Range", "bytes=20-"), ("If-Range", "\"range26\"")])
            #expect(fresh.status == 206)
            #expect(fresh.text == "uvwxyz")
        }
    }

    @Test func byteRangeParsing() {
        #expect(ByteRange.parse("bytes=0-0", length: 10) == .satisfiable(0..<1))
        #expect(ByteRange.parse("bytes=-0", length: 10) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=5-2", length: 10) == .ignored)
        #expect(ByteRange.parse("items=0-1", length: 10) == .ignored)
        #expect(ByteRange.parse("bytes=0-1,3-4", length: 10) == .ignored)
        #expect(ByteRange.parse("bytes=-20", length: 10) == .satisfiable(0..<10))
    }

    @Test func uploadReportsLengthAndDigest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/upload"), .POST, body: .generated(count: 1_000_003, seed: 9))
            var generator = SeededBytes(seed: 9)
            let expected = SHA256.hash(data: generator.next(1_000_003)).map { String(format: "%02x", $0) }.joined()
            #expect(response.json["bytes"] as? Int == 1_000_003)
            #expect(response.json["sha256"] as? String == expected)
        }
    }

    @Test func serverSentEventsFollowTheFormat() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/sse?count=2"))
            #expect(response.header("Content-Type") == "text/event-stream")
            #expect(response.text == "id: 0\nevent: tick\ndata: {\"id\":0}\n\nid: 1\nevent: tick\ndata: {\"id\":1}\n\n")
        }
    }
}

/// Counts the body bytes a client has read so far, and tells each new total.
private final class ReceivedBytes: Sendable {
    private let total = Mutex(0)
    let totals: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    init() { (totals, continuation) = AsyncStream.makeStream() }

    var count: Int { total.withLock { $0 } }

    func add(_ size: Int) {
        let newTotal = total.withLock { total in
            total += size
            return total
        }
        continuation.yield(newTotal)
    }

    /// Returns once `count` bytes have been read (failing after the default timeout).
    func waitFor(_ count: Int) async throws {
        let totals = self.totals
        try await withTimeout { for await total in totals where total >= count { return } }
    }
}
