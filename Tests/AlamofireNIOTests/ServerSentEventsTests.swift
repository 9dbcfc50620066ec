import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server-Sent Events over `DataStreamRequest`, against the server's `/sse` (which resumes after
/// the request's `Last-Event-ID`).
@Suite struct ServerSentEventsTests {
    static func tick(_ id: Int) -> ServerSentEvent {
        ServerSentEvent(id: "\(id)", event: "tick", data: "{\"id\":\(id)}")
    }

    @Test func aHandlerGetsEachEventThenTheCompletion() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await DataStreamTests.events { (handler: @escaping DataStreamRequest.Handler<ServerSentEvent, Never>) in
                keepAlive(Session()).streamRequest(server.url("/sse?count=3")).responseServerSentEvents(
                    on: DataStreamTests.queue, handler: handler)
            }
            #expect(events.compactMap(\.value) == [Self.tick(0), Self.tick(1), Self.tick(2)])
            #expect(events.count == 4)
            #expect(events.last?.completion?.error == nil)
        }
    }

    @Test func withoutReconnectionTheStreamEndsWithItsConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await withTimeout {
                var events: [ServerSentEvent] = []
                for try await event in keepAlive(Session()).serverSentEvents(server.url("/sse?count=2")) { events.append(event) }
                return events
            }
            #expect(events == [Self.tick(0), Self.tick(1)])
        }
    }

    /// Two events per connection: the rest come over new connections that resume after `Last-Event-ID`.
    @Test func reconnectionResumesAfterTheLastEventID() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await withTimeout {
                var events: [ServerSentEvent] = []
                let stream = keepAlive(Session()).serverSentEvents(
                    server.url("/sse?count=5&per_connection=2"), reconnect: true, reconnectionTime: 0.01)
                for try await event in stream {
                    events.append(event)
                    if events.count == 5 { break }
                }
                return events
            }
            #expect(events == (0..<5).map(Self.tick))
            #expect(server.statistics.totalRequests == 3)
        }
    }

    @Test func aResponseThatIsNotAnEventStreamEndsItForGood() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let error = try await withTimeout { () -> AFError? in
                do {
                    for try await _ in keepAlive(Session()).serverSentEvents(server.url("/get"), reconnect: true, reconnectionTime: 0.01) {}
                    return nil
                } catch {
                    return error as? AFError
                }
            }
            guard case .responseValidationFailed(.unacceptableContentType(_, "application/json")) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }
}

extension ServerSentEventsTests {
    /// The connections resume themselves: a session that starts nothing by itself still streams.
    @Test func aSessionThatDoesNotStartRequestsStillStreams() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(startRequestsImmediately: false)
            let events = try await withTimeout {
                var events: [ServerSentEvent] = []
                for try await event in session.serverSentEvents(server.url("/sse?count=2")) { events.append(event) }
                return events
            }
            #expect(events == [Self.tick(0), Self.tick(1)])
        }
    }

    /// A response that is not an event stream is refused on its head: a body the server holds is not waited for.
    @Test func aRefusedResponseIsNotRead() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let error = try await withTimeout(seconds: 10) { () -> AFError? in
                do {
                    for try await _ in keepAlive(Session()).serverSentEvents(server.url("/range/20?hold=rest&hold_at=0")) {}
                    return nil
                } catch {
                    return error as? AFError
                }
            }
            guard case .responseValidationFailed(.unacceptableContentType(_, "application/octet-stream")) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    /// Before the limit, a server sending one endless line grew the client's memory without end.
    @Test func anEndlessLineFailsTheHandlersRequestAndClosesTheConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await DataStreamTests.events { (handler: @escaping DataStreamRequest.Handler<ServerSentEvent, Never>) in
                keepAlive(Session()).streamRequest(server.url("/sse?count=2&long_line=\(1 << 30)")).responseServerSentEvents(
                    on: DataStreamTests.queue, maximumEventSize: 64 * 1024, handler: handler)
            }
            #expect(events.compactMap(\.value) == [Self.tick(0), Self.tick(1)])
            guard case .responseSerializationFailed(.customSerializationFailed(let error))? = events.last?.completion?.error else {
                Issue.record("\(String(describing: events.last?.completion?.error))")
                return
            }
            #expect(error as? ServerSentEventParser.EventTooLarge == ServerSentEventParser.EventTooLarge(maximumEventSize: 64 * 1024))
            // The request was cancelled, so the server stops sending its gigabyte.
            try await withTimeout { try await server.waitUntil { $0.openConnections == 0 } }
        }
    }

    @Test func anEndlessLineEndsTheEventStreamWithoutReconnecting() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let stream = keepAlive(Session()).serverSentEvents(
                server.url("/sse?count=1&long_line=\(1 << 30)"), reconnect: true, reconnectionTime: 0.01, maximumEventSize: 64 * 1024)
            let (events, failure) = try await withTimeout { () async -> ([ServerSentEvent], (any Error)?) in
                var events: [ServerSentEvent] = []
                do {
                    for try await event in stream { events.append(event) }
                    return (events, nil)
                } catch {
                    return (events, error)
                }
            }
            #expect(events == [Self.tick(0)])
            guard case .responseSerializationFailed(.customSerializationFailed(let error))? = failure?.asAFError else {
                Issue.record("\(String(describing: failure))")
                return
            }
            #expect(error is ServerSentEventParser.EventTooLarge)
            #expect(server.statistics.totalRequests == 1)
            try await withTimeout { try await server.waitUntil { $0.openConnections == 0 } }
        }
    }
}
