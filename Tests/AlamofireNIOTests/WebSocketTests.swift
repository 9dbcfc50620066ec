import AFSynchronization
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@_spi(WebSocket) @testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `WebSocketRequest` against the bundled WebSocket server: Alamofire's API, its event order, the
/// close handshake both ways, the request pipeline applied to the handshake, and bad servers.
@Suite struct WebSocketTests {
    /// What a handler heard, in order, as short strings.
    final class EventLog: Sendable {
        private struct State {
            var entries: [String] = []
            var completion: WebSocketRequest.Completion?
            var isComplete = false
            var waiter: CheckedContinuation<Bool, Never>?
        }

        private let state = Mutex(State())

        var all: [String] { state.withLock { $0.entries } }
        var completed: WebSocketRequest.Completion? { state.withLock { $0.completion } }

        func record(_ event: WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>) {
            switch event.kind {
            case .connected(let chosen): append("connected(\(chosen ?? "nil"))")
            case .receivedMessage(.string(let text)): append("text(\(text))")
            case .receivedMessage(.data(let data)): append("data(\(data.count))")
            case .receivedMessage: append("unknown")
            case .serializerFailed: append("serializerFailed")
            case .disconnected(let code, let reason):
                append("disconnected(\(code.rawValue),\(reason.map { String(decoding: $0, as: UTF8.self) } ?? "nil"))")
            case .completed(let completion): complete(completion)
            }
        }

        func append(_ entry: String) { state.withLock { $0.entries.append(entry) } }

        func complete(_ completion: WebSocketRequest.Completion) {
            state.withLock { state in
                state.completion = completion
                state.entries.append("completed")
                state.isComplete = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume(returning: true)
        }

        /// Waits for `.completed`, failing the test after `seconds`.
        func waitForCompletion(seconds: Int = 20) async throws {
            let timeout = Task {
                try await Task.sleep(for: .seconds(seconds))
                self.state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }?.resume(returning: false)
            }
            defer { timeout.cancel() }
            let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let done = state.withLock { state in
                    if !state.isComplete { state.waiter = continuation }
                    return state.isComplete
                }
                if done { continuation.resume(returning: true) }
            }
            try #require(finished, "the WebSocket request did not complete")
        }
    }

    /// A queue of each test's own: one test's handler holding its queue must not hold another's.
    let queue = DispatchQueue(label: "WebSocketTests")

    static func withServer(tls: TestCertificates? = nil, _ body: (WebSocketTestServer) async throws -> Void) async throws {
        let server = try await WebSocketTestServer.start(tls: tls)
        do {
            try await body(server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test func serverMessagesThenItsCloseArriveInOrderAndTheRequestSucceeds() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("close", query: "code=1001&reason=bye"))
                .streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "text(closing)", "disconnected(1001,bye)", "completed"])
            #expect(log.completed?.error == nil)
            #expect(log.completed?.response?.statusCode == 101)
            #expect(log.completed?.metrics?.transactionMetrics.count == 1)
            #expect(request.isFinished)
            #expect(request.task is URLSessionWebSocketTask)
        }
    }

    @Test func sendsBeforeTheConnectionOpensAreQueuedAndEchoedInOrder() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let sent = Mutex<[String]>([])
            let request = session.webSocketRequest(to: server.url("echo"))
            for index in 0..<3 {
                request.send(.string("message \(index)"), queue: queue) { result in
                    if case .success = result { sent.withLock { $0.append("sent \(index)") } }
                }
            }
            request.streamMessageEvents(on: queue) { event in
                log.record(event)
                if case .receivedMessage(.string("message 2")) = event.kind { event.close(sending: .normalClosure) }
            }
            try await log.waitForCompletion()
            #expect(
                log.all == [
                    "connected(nil)", "text(message 0)", "text(message 1)", "text(message 2)", "disconnected(1000,nil)", "completed",
                ])
            #expect(sent.withLock { $0 } == ["sent 0", "sent 1", "sent 2"])
            #expect(log.completed?.error == nil)
        }
    }

    @Test func decodableMessagesAndSerializerFailures() async throws {
        struct Greeting: Decodable, Sendable, Equatable { let hello: String }
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let kinds = Mutex<[String]>([])
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("echo"))
            request.send(.string(#"{"hello":"world"}"#), queue: queue) { _ in }
            request.send(.data(Data("not json".utf8)), queue: queue) { _ in }
            request.streamDecodableEvents(Greeting.self, on: queue) { event in
                switch event.kind {
                case .receivedMessage(let greeting): kinds.withLock { $0.append("value(\(greeting.hello))") }
                case .serializerFailed(let error):
                    let isDecoding = if case .decoding = error as? DecodableWebSocketMessageDecoder<Greeting>.Error { true } else { false }
                    kinds.withLock { $0.append("failed(\(isDecoding))") }
                    event.close(sending: .normalClosure)
                case .completed(let completion): log.complete(completion)
                default: break
                }
            }
            try await log.waitForCompletion()
            #expect(kinds.withLock { $0 } == ["value(world)", "failed(true)"])
        }
    }

    @Test func webSocketTaskStreamsEventsAndSends() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let task = session.webSocketRequest(to: server.url("echo")).webSocketTask()
            let kinds = try await withTimeout {
                var kinds: [String] = []
                for await event in task.streamingMessageEvents() {
                    switch event.kind {
                    case .connected:
                        kinds.append("connected")
                        try await task.send(.string("one"))
                        try await task.send(.data(Data([1, 2, 3])))
                    case .receivedMessage(.string(let text)):
                        kinds.append("text(\(text))")
                    case .receivedMessage(.data(let data)):
                        kinds.append("data(\(Array(data)))")
                        task.close(sending: .normalClosure)
                    case .disconnected(let code, _):
                        kinds.append("disconnected(\(code.rawValue))")
                    case .completed(let completion):
                        kinds.append("completed(\(completion.error == nil))")
                    default:
                        kinds.append("other")
                    }
                }
                return kinds
            }
            #expect(kinds == ["connected", "text(one)", "data([1, 2, 3])", "disconnected(1000)", "completed(true)"])
        }
    }

    @Test func webSocketTaskMessagesStreamEndsWhenTheServerCloses() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let task = session.webSocketRequest(to: server.url("stream", query: "count=3")).webSocketTask()
            let texts = try await withTimeout {
                var texts: [String] = []
                for await case .string(let text) in task.streamingMessages() { texts.append(text) }
                return texts
            }
            #expect(texts == ["message 0", "message 1", "message 2"])
        }
    }

    @Test func subprotocolIsOfferedAndReported() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            session.webSocketRequest(to: server.url("protocol"), configuration: .protocol("chat"))
                .streamMessageEvents(on: queue) { event in
                    log.record(event)
                    if case .connected = event.kind { event.close(sending: .normalClosure) }
                }
            try await log.waitForCompletion()
            #expect(log.all.first == "connected(chat)")
            #expect(log.completed?.error == nil)
        }
    }

    @Test(arguments: ["refuse", "bad-accept", "wrong-protocol"])
    func aRefusedHandshakeFailsWithBadServerResponse(path: String) async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            session.webSocketRequest(to: server.url(path), configuration: .protocol("chat")).streamMessageEvents(
                on: queue, handler: log.record)
            try await log.waitForCompletion()
            #expect(log.all == ["completed"])
            let error = try #require(log.completed?.error)
            #expect((error.underlyingError as? URLError)?.code == .badServerResponse)
        }
    }

    @Test func theHandshakeFollowsRedirectsAndCarriesInterceptorHeadersAndCookies() async throws {
        try await Self.withServer { server in
            let configuration = URLSessionConfiguration.af.ephemeral
            let cookieURL = URL(string: server.baseURL.absoluteString.replacingOccurrences(of: "ws://", with: "http://"))!
            configuration.httpCookieStorage?.setCookies(
                [HTTPCookie(properties: [.name: "flavour", .value: "oat", .path: "/", .domain: "127.0.0.1"])!], for: cookieURL,
                mainDocumentURL: nil)
            let session = keepAlive(Session(configuration: configuration))
            let adapter = Adapter { request, _, completion in
                var request = request
                request.headers.add(name: "X-Adapted", value: "yes")
                completion(.success(request))
            }
            let messages = Mutex<[String]>([])
            let headersLog = EventLog()
            session.webSocketRequest(to: server.url("headers"), interceptor: adapter).streamMessageEvents(on: queue) { event in
                if case .receivedMessage(.string(let text)) = event.kind {
                    messages.withLock { $0.append(text) }
                    event.close(sending: .normalClosure)
                }
                headersLog.record(event)
            }
            try await headersLog.waitForCompletion()
            let headers =
                try JSONSerialization.jsonObject(with: Data(try #require(messages.withLock { $0.first }).utf8)) as? [String: String]
            #expect(headers?["x-adapted"] == "yes")
            #expect(headers?["cookie"] == "flavour=oat")
            #expect(headers?["upgrade"] == "websocket")
            #expect(headers?["sec-websocket-version"] == "13")

            // A redirected handshake ends at the echo endpoint.
            let log = EventLog()
            let redirected = session.webSocketRequest(to: server.url("redirect")).streamMessageEvents(on: queue) { event in
                log.record(event)
                if case .connected = event.kind { event.close(sending: .normalClosure) }
            }
            try await log.waitForCompletion()
            #expect(log.completed?.error == nil)
            #expect(redirected.performedRequests.last?.url?.path == "/websocket/echo")
        }
    }

    @Test func aRefusedUpgradeIsRetriedByTheRetrier() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let retrier = Retrier { _, _, error, completion in
                completion(((error as? AFError)?.underlyingError as? URLError)?.code == .badServerResponse ? .retry : .doNotRetry)
            }
            let request = session.webSocketRequest(to: server.url("flaky", query: "key=\(UUID())"), interceptor: retrier)
                .streamMessageEvents(on: queue) { event in
                    log.record(event)
                    if case .connected = event.kind { event.close(sending: .normalClosure) }
                }
            try await log.waitForCompletion()
            #expect(request.retryCount == 1)
            #expect(log.all == ["connected(nil)", "disconnected(1000,nil)", "completed"])
            #expect(log.completed?.error == nil)
        }
    }

    @Test func fragmentedMessagesAreReassembledAndServerPingsAnswered() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            session.webSocketRequest(to: server.url("fragmented")).streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "text(hello, world)", "disconnected(1000,nil)", "completed"])
        }
    }

    @Test func pingsGetPongs() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let pongs = Mutex(0)
            session.webSocketRequest(to: server.url("echo")).streamMessageEvents(on: queue) { event in
                log.record(event)
                guard case .connected = event.kind else { return }
                event.sendPing(respondingOn: queue) { response in
                    if case .pong(let pong) = response, pong.latency >= 0 { pongs.withLock { $0 += 1 } }
                    event.close(sending: .normalClosure)
                }
            }
            try await log.waitForCompletion()
            #expect(pongs.withLock { $0 } == 1)
            #expect(log.completed?.error == nil)
        }
    }

    /// On a manual clock: the first automatic ping goes out once its interval has passed, and a pong
    /// still missing at the end of the next interval fails the request with `timedOut`, not before.
    @Test func aMissedPongFailsTheRequestWithTimedOut() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let clock = ManualScheduler()
            session.delayScheduler = clock
            let log = EventLog()
            session.webSocketRequest(to: server.url("silent"), configuration: .pingInterval(30)).streamMessageEvents(
                on: queue, handler: log.record)
            let ping = try await clock.next()
            #expect(ping.delay == 30)
            ping.fire()
            let pongDeadline = try await clock.next()
            #expect(pongDeadline.delay == 30)
            #expect(log.completed == nil)
            pongDeadline.fire()
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "completed"])
            #expect((log.completed?.error?.underlyingError as? URLError)?.code == .timedOut)
        }
    }

    /// On a manual clock: a pong that arrives in time schedules the next ping, and its deadline
    /// passing then leaves the WebSocket open.
    @Test func aPongInTimeKeepsTheSocketOpenAndSchedulesTheNextPing() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let clock = ManualScheduler()
            session.delayScheduler = clock
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("echo"), configuration: .pingInterval(30))
            request.streamMessageEvents(on: queue, handler: log.record)
            try await clock.next().fire()
            // The pong's deadline is scheduled as the ping is sent, the next ping when the pong arrives.
            let pongDeadline = try await clock.next()
            let nextPing = try await clock.next()
            #expect(pongDeadline.delay == 30 && nextPing.delay == 30)
            pongDeadline.fire()
            // The deadline's work ran: the request's queue is serial.
            await withCheckedContinuation { continuation in request.underlyingQueue.async { continuation.resume() } }
            #expect(log.completed == nil)
            request.close(sending: .normalClosure)
            try await log.waitForCompletion()
            #expect(log.completed?.error == nil)
            #expect(log.all == ["connected(nil)", "disconnected(1000,nil)", "completed"])
        }
    }

    @Test(arguments: [
        ("invalid-utf8", URLError.Code.badServerResponse), ("reserved-opcode", .badServerResponse), ("masked", .badServerResponse),
        ("long-ping", .badServerResponse), ("truncated", .networkConnectionLost), ("drop", .networkConnectionLost),
    ])
    func aServerBreakingTheProtocolFailsTheRequestCleanly(path: String, code: URLError.Code) async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            session.webSocketRequest(to: server.url(path)).streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "completed"])
            #expect((log.completed?.error?.underlyingError as? URLError)?.code == code)
        }
    }

    @Test func aMessageOverTheMaximumSizeFailsTheRequest() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("echo"), configuration: .maximumMessageSize(1 << 20))
            request.send(.data(Data(count: (1 << 20) + 1)), queue: queue) { _ in }
            request.streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "completed"])
            #expect((log.completed?.error?.underlyingError as? URLError)?.code == .dataLengthExceedsMaximum)
        }
    }

    @Test func cancellingFailsWithExplicitlyCancelledWithoutDisconnected() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            session.webSocketRequest(to: server.url("echo")).streamMessageEvents(on: queue) { event in
                log.record(event)
                if case .connected = event.kind { event.cancel() }
            }
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "completed"])
            #expect(log.completed?.error?.isExplicitlyCancelledError == true)
        }
    }

    @Test func aSlowHandlerStopsTheSocketsReadsAndStillGetsEveryMessage() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let count = Mutex(0)
            let request = session.webSocketRequest(to: server.url("stream", query: "count=64&size=65536"))
            request.streamMessageEvents(on: queue) { event in
                if case .receivedMessage = event.kind {
                    let seen = count.withLock { count in
                        count += 1
                        return count
                    }
                    // The first message holds the handler until the request is waiting on it.
                    if seen == 1 {
                        let awaitingDemand = DispatchSemaphore(value: 0)
                        request.whenAwaitingDemand { awaitingDemand.signal() }
                        let waited = awaitingDemand.wait(timeout: .now() + 10) == .success
                        log.append("waited(\(waited && request.isAwaitingDemand))")
                    }
                }
                log.record(event)
            }
            try await log.waitForCompletion()
            #expect(count.withLock { $0 } == 64)
            #expect(log.all.contains("waited(true)"))
            #expect(log.completed?.error == nil)
        }
    }

    @Test func wssWithAPinnedCertificate() async throws {
        let certificates = try TestCertificates.generate()
        try await Self.withServer(tls: certificates) { server in
            let leaf = try SecCertificate(derEncoded: Data(certificates.leaf(for: .valid).certificateDER))
            let root = try SecCertificate(derEncoded: Data(certificates.certificateAuthority.certificateDER))
            let manager = ServerTrustManager(evaluators: ["localhost": PinnedCertificatesTrustEvaluator(certificates: [leaf])])
            let session = keepAlive(Session(serverTrustManager: manager, additionalTrustRoots: [root]))
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("echo"))
            request.send(.string("over TLS"), queue: queue) { _ in }
            request.streamMessageEvents(on: queue) { event in
                log.record(event)
                if case .receivedMessage = event.kind { event.close(sending: .normalClosure) }
            }
            try await log.waitForCompletion()
            #expect(log.completed?.error == nil, "\(String(describing: log.completed?.error))")
            #expect(log.all == ["connected(nil)", "text(over TLS)", "disconnected(1000,nil)", "completed"])
            #expect(request.metrics?.transactionMetrics.first?.negotiatedTLSProtocolVersion != nil)

            // A server that sends its frames and closes right after its 101.
            let closing = EventLog()
            session.webSocketRequest(to: server.url("close", query: "code=1000")).streamMessageEvents(on: queue, handler: closing.record)
            try await closing.waitForCompletion()
            #expect(closing.all == ["connected(nil)", "text(closing)", "disconnected(1000,nil)", "completed"])
        }
    }

    @Test func aFinishedRequestIsReleasedWithItsHandlers() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            weak var released: WebSocketRequest?
            do {
                let request = session.webSocketRequest(to: server.url("close", query: "code=1000"))
                request.streamMessageEvents(on: queue, handler: log.record)
                request.streamDecodable(String.self, on: queue) { _ in }
                released = request
            }
            try await log.waitForCompletion()
            // The serialization queue lets go of it once the last delivery has run.
            for _ in 0..<200 where released != nil { try await Task.sleep(for: .milliseconds(5)) }
            #expect(released == nil)
        }
    }

    @Test func cancellingWhileTheTLSHandshakeHangsEndsAtOnce() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let session = keepAlive(Session())
        let log = EventLog()
        let request = session.webSocketRequest(to: URL(string: "wss://127.0.0.1:\(listener.port)/hang")!)
            .streamMessageEvents(on: queue, handler: log.record)
        // Connected: the client has sent, or is sending, its ClientHello, which is never answered.
        try await withTimeout(seconds: 10) { await listener.accepted.first { _ in true } }
        request.cancel()
        // The connect timeout is a minute: completing within the wait means the cancel ended it.
        try await log.waitForCompletion(seconds: 20)
        #expect(log.all == ["completed"])
        #expect(log.completed?.error?.isExplicitlyCancelledError == true)
    }

    @Test func closingBeforeTheConnectionOpensFinishesWithoutAnError() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("echo"), shouldAutomaticallyResume: false)
            request.streamMessageEvents(on: queue, handler: log.record)
            request.close(sending: .normalClosure)
            try await log.waitForCompletion()
            #expect(log.all == ["completed"])
            #expect(log.completed?.error == nil)
            #expect(request.isCancelled)
        }
    }

    @Test func closingTellsTheMonitorsOfTheCancelAndOfTheTasksAsAlamofireDoes() async throws {
        try await Self.withServer { server in
            let heard = Mutex<[String]>([])
            let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "monitor"))
            monitor.requestDidCancel = { _ in heard.withLock { $0.append("didCancel") } }
            monitor.requestDidCancelTask = { _, task in heard.withLock { $0.append("didCancelTask(\(task is URLSessionWebSocketTask))") } }
            let session = keepAlive(Session(eventMonitors: [monitor]))
            let log = EventLog()
            session.webSocketRequest(to: server.url("echo")).streamMessageEvents(on: queue) { event in
                log.record(event)
                if case .connected = event.kind { event.close(sending: .goingAway) }
            }
            try await log.waitForCompletion()
            #expect(log.all == ["connected(nil)", "disconnected(1001,nil)", "completed"])
            #expect(log.completed?.error == nil)
            #expect(heard.withLock { $0 } == ["didCancel", "didCancelTask(true)"])
        }
    }

    @Test func sendingAfterTheRequestFinishedFailsInsteadOfWaiting() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let request = session.webSocketRequest(to: server.url("close", query: "code=1000"))
            let task = request.webSocketTask()
            let events = try await withTimeout {
                var count = 0
                for await _ in task.streamingMessageEvents() { count += 1 }
                return count
            }
            #expect(events == 4)
            do {
                try await withTimeout { try await task.send(.string("too late")) }
                Issue.record("a send after the end succeeded")
            } catch {
                #expect((error.asAFError?.underlyingError as? URLError)?.code == .networkConnectionLost, "\(error)")
            }
        }
    }

    @Test func permessageDeflateIsNegotiatedAndAppliedBothWays() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("deflate"))
            request.send(.string("Hello"), queue: queue) { _ in }
            request.streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            // The server's compressed Hello, then how the client's Hello went: compressed, as RFC 7692's example.
            #expect(
                log.all == [
                    "connected(nil)", "text(Hello)", "text(rsv1=true payload=f248cdc9c90700)", "disconnected(1000,nil)", "completed",
                ])
            #expect(log.completed?.response?.headers["Sec-WebSocket-Extensions"]?.hasPrefix("permessage-deflate") == true)
        }
    }

    @Test func aPlainWebSocketGoesThroughAnHTTPProxyByATunnel() async throws {
        try await Self.withServer { server in
            let proxy = try await ProxyServer.start()
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.connectionProxyDictionary = ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
            let session = keepAlive(Session(configuration: configuration, eventMonitors: []))
            let log = EventLog()
            let request = session.webSocketRequest(to: server.url("close", query: "code=1000"))
                .streamMessageEvents(on: queue, handler: log.record)
            try await log.waitForCompletion()
            try await proxy.shutdown()
            #expect(log.all == ["connected(nil)", "text(closing)", "disconnected(1000,nil)", "completed"])
            #expect(proxy.statistics.tunnels == ["127.0.0.1:\(server.baseURL.port ?? 0)"])
            #expect(request.metrics?.transactionMetrics.first?.isProxyConnection == true)
        }
    }

    @Test func cancellingTheTaskEndsTheRequestAsCancelled() async throws {
        try await Self.withServer { server in
            let session = keepAlive(Session())
            let request = session.webSocketRequest(to: server.url("echo"))
            let task = request.webSocketTask()
            let kinds = try await withTimeout {
                var kinds: [String] = []
                for await event in task.streamingMessageEvents(automaticallyCancelling: false) {
                    switch event.kind {
                    case .connected:
                        kinds.append("connected")
                        task.cancel()
                    case .completed(let completion):
                        kinds.append("completed(\(completion.error?.isExplicitlyCancelledError == true))")
                    default:
                        kinds.append("other")
                    }
                }
                return kinds
            }
            #expect(kinds == ["connected", "completed(true)"])
            #expect(request.isCancelled)
        }
    }
}
