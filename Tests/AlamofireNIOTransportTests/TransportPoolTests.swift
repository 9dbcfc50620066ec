import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1
import Testing

@Suite struct TransportPoolTests {
    @Test func fiveHundredConcurrentRequestsNeverExceedTheLimit() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 6 }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<500 {
                    group.addTask { try await transport.fetch(server.url("/get?i=\(index)")).status }
                }
                return try await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(statuses == [200: 500])
            let statistics = server.statistics
            #expect(statistics.totalRequests == 500)
            #expect(statistics.peakOpenConnections <= 6)
            #expect(statistics.acceptedConnections == 6)
        }
    }

    @Test func limitOfOneSerialisesRequestsInOrder() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask { _ = try await transport.fetch(server.url("/get")) }
                }
                try await group.waitForAll()
            }
            #expect(server.statistics.acceptedConnections == 1)
            #expect(server.statistics.requestsPerConnection == [20])
        }
    }

    @Test func staleConnectionIsRetriedOnceOnAFreshOne() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let first = try await transport.fetch(server.faultURL("/close-on-reuse"))
            #expect(first.text == "ok")
            // The server closes the reused connection without answering: the GET is retried.
            let second = try await transport.fetch(server.faultURL("/close-on-reuse"))
            #expect(second.text == "ok")
            #expect(second.metrics.isReusedConnection == false)
        }
    }

    @Test func nonIdempotentRequestWithBodyIsNotRetried() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            _ = try await transport.fetch(server.faultURL("/close-on-reuse"))
            let error = await transportError {
                try await transport.fetch(server.faultURL("/close-on-reuse"), .POST, body: .bytes(ByteBuffer(string: "data")))
            }
            #expect(error?.code == .networkConnectionLost)
        }
    }

    @Test func aStreamedBodyWhoseProducerStartedIsNotSentAgainButAReplayableOneIs() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let produce: @Sendable (TransportBodyWriter) async throws -> Void = { writer in
                try await writer.write(ByteBuffer(string: "data"))
            }
            _ = try await transport.fetch(server.faultURL("/close-on-reuse"))
            // The reused connection closes unanswered. A stream read once may have lost what its
            // producer read: the PUT fails rather than send part of its body.
            let error = await transportError {
                try await transport.fetch(server.faultURL("/close-on-reuse"), .PUT, body: .stream(length: 4, produce))
            }
            #expect(error?.code == .networkConnectionLost)
            // A replayable stream starts over on a fresh connection.
            _ = try await transport.fetch(server.faultURL("/close-on-reuse"))
            let again = try await transport.fetch(server.faultURL("/close-on-reuse"), .PUT, body: .replayableStream(length: 4, produce))
            #expect(again.text == "ok")
            #expect(again.metrics.isReusedConnection == false)
        }
    }

    @Test func extraBytesAfterAResponseMakeTheConnectionUnusable() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let first = try await transport.fetch(server.faultURL("/extra-bytes"))
            #expect(first.text == "ok")
            let second = try await transport.fetch(server.faultURL("/get"))
            #expect(second.text == "ok")
            #expect(second.metrics.isReusedConnection == false)
        }
    }

    @Test func idleConnectionsClosedByTheServerAreNotReused() async throws {
        try await HTTPBinServer.withServer(.init(idleTimeout: .milliseconds(50))) { server async throws in
            let transport = makeTransport()
            _ = try await transport.fetch(server.url("/get"))
            try await server.waitUntil { $0.openConnections == 0 }
            let again = try await transport.fetch(server.url("/get"))
            #expect(again.status == 200)
            #expect(server.statistics.acceptedConnections == 2)
        }
    }

    @Test func poolIdleTimeoutClosesUnusedConnections() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.idleConnectionTimeout = .milliseconds(50) }
            _ = try await transport.fetch(server.url("/get"))
            try await server.waitUntil { $0.openConnections == 0 }
            #expect(server.statistics.acceptedConnections == 1)
        }
    }
}

@Suite struct TransportFaultTests {
    @Test(arguments: [
        ("/truncated-body", URLError.Code.networkConnectionLost),
        ("/truncated-chunked", .networkConnectionLost),
        ("/malformed", .badServerResponse),
        ("/close", .networkConnectionLost),
    ])
    func brokenResponsesAreErrorsNotCrashes(path: String, code: URLError.Code) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let error = await transportError { try await makeTransport().fetch(server.faultURL(path)) }
            #expect(error?.code == code)
        }
    }

    @Test func refusedConnectionIsCannotConnectToHost() async throws {
        // Bound but not listening: a stopped server's port could be taken by another test's meanwhile.
        let error = try await RefusingPort.withRefusingPort { port in
            await transportError { try await makeTransport().fetch(URL(string: "http://127.0.0.1:\(port)/get")!) }
        }
        #expect(error?.code == .cannotConnectToHost)
    }

    @Test func unresolvableHostIsCannotFindHost() async throws {
        let error = await transportError { try await makeTransport().fetch(URL(string: "http://no-such-host.invalid/")!) }
        #expect(error?.code == .cannotFindHost)
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/hosts", "http:///nohost"])
    func unsupportedURLsAreRejected(url: String) async throws {
        let error = await transportError { try await makeTransport().fetch(URL(string: url)!) }
        #expect(error?.code == .unsupportedURL || error?.code == .badURL)
    }

    @Test func headerInjectionIsRejected() async throws {
        var request = TransportRequest(url: URL(string: "http://127.0.0.1:1/")!)
        request.headers.add(name: "X-Bad", value: "a\r\nInjected: yes")
        let error = await transportError { try await makeTransport().execute(request) }
        #expect(error?.code == .badURL)
    }
}
