import AFSynchronization
import AlamofireNIOTransport
package import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// One attempt of a request, like a `URLSessionTask`: one or more exchanges (a redirect or a
/// challenge adds one), ending with one response or one error.
///
/// Its life is a ``LoadingTaskStateMachine`` behind one lock; the task performs the machine's
/// actions (start or cancel an exchange, ask the delegate, hand over the body, complete) after
/// releasing the lock. A body kept in memory is collected on the event loop; one written to a file
/// streams there with back-pressure, so memory stays flat whatever the size. `file:` and `data:`
/// URLs are read locally (``LocalResource``), as URLSession reads them.
package final class LoadingTask: Sendable {
    /// What `URLSessionTask.state` would say of the task.
    package enum Status: Sendable, Equatable {
        case running
        case suspended
        case canceling
        case completed
    }

    /// What the task is at one moment, for the API layer's `URLSessionTask` stand-ins.
    package struct Snapshot: Sendable {
        package var status: Status
        package var currentRequest: URLRequest
        package var receivedResponse: ReceivedResponse?
        /// The response as Foundation's type (made on first read).
        package var response: URLResponse? { receivedResponse?.urlResponse }
        package var error: URLError?
        package var countOfBytesSent: Int64
        package var countOfBytesExpectedToSend: Int64
        package var countOfBytesReceived: Int64
        /// -1 while unknown, as URLSession reports it.
        package var countOfBytesExpectedToReceive: Int64
    }

    /// Where the final response's body goes.
    package enum Destination: Sendable, Equatable {
        /// Collected in memory, then handed over with `didReceive data` once the whole body has
        /// arrived (the fastest way; the delegate hears of the bytes as they arrive, then of the
        /// response with the whole body).
        case memory
        /// Handed over with `didReceive data` chunk by chunk as it arrives, after the delegate has
        /// allowed the response: the delegate hears of the response first and can stop the body, and
        /// hears of the bytes received as their data is handed over. When the delegate keeps the
        /// whole body in memory (`keptWhole`: a data request's), it is bounded by the session's
        /// `maximumBodySize` as a collected one is; a stream's is not.
        case stream(keptWhole: Bool)
        /// Written to a new file in `directory`, handed over with `didFinishDownloadingTo`.
        case file(directory: URL)
        /// A WebSocket (`ws`, `wss`, or `http`/`https` upgraded): once the server switches protocols,
        /// its messages are handed over with `didReceive message` until it closes.
        case webSocket(subprotocols: [String], maximumMessageSize: Int)
    }

    struct State: @unchecked Sendable {
        var machine = LoadingTaskStateMachine()
        var request: TaskRequest
        /// The latest response.
        var response: ReceivedResponse?
        /// The answer to the last challenge, sent with every exchange until a redirect, and the
        /// refusals counted.
        var answers = ChallengeAnswers()
        /// The transactions, and the exchange under way until it has its own.
        var log = TransactionLog()
        /// The piece of work the task is waiting on (an exchange, or a body being written), and how
        /// to stop it.
        var work = CurrentWork()
        /// What the cache needs to know of the exchange under way.
        var cache = TaskCacheFacts()
        var counts = TransferCounts()
        /// Which file the download writes and owns, and what resume data for it would say.
        var download = DownloadFileState()
        /// The open WebSocket, from the handshake until the task completes.
        var webSocket: TransportWebSocket?
        /// What waiting for connectivity needs, in a session that waits (untouched otherwise).
        var connectivity = ConnectivityWait()

        /// An exchange that failed or was cancelled still counts (see ``TransactionLog``).
        mutating func recordUnfinishedExchange() {
            log.recordUnfinishedExchange(request: request.current, now: Date())
        }

        struct ConnectivityWait {
            /// The session's count of network changes when the exchange under way started: a wait
            /// after it finds no route waits for a later change.
            var changesAtExchangeStart = 0
            /// The resource timeout's timer (set by the first wait, cancelled as the task completes),
            /// and whether it has fired.
            var timer: Scheduled<Void>?
            var timedOut = false
        }

        var snapshot: Snapshot {
            Snapshot(
                status: machine.status, currentRequest: request.current, receivedResponse: response, error: machine.completionError,
                countOfBytesSent: counts.sent,
                countOfBytesExpectedToSend: counts.expectedToSend, countOfBytesReceived: counts.received,
                countOfBytesExpectedToReceive: counts.expectedToReceive)
        }
    }

    /// Unique within the loading session, from 1, as URLSession numbers its tasks.
    package let taskIdentifier: Int
    /// The request the task was made with.
    package let originalRequest: URLRequest
    let session: LoadingSession
    let destination: Destination
    let delegate: any LoadingTaskDelegate
    /// The client certificate the task's connections present, in place of the session's.
    let clientIdentity: TransportClientIdentity?
    /// Where the transport logs the task's exchanges, in place of the session's logger.
    let logger: Logger?
    /// What the task works for (the API layer's request), for the delegate to find it. Let go once
    /// the task has completed, so that an owner keeping its tasks forms no cycle.
    package var owner: (any AnyObject & Sendable)? { ownerState.withLock { $0 } }
    private let ownerState: Mutex<(any AnyObject & Sendable)?>
    private let started = Date()
    let wallClock = WallClockAnchor()
    let state: Mutex<State>

    init(
        session: LoadingSession, identifier: Int, request: URLRequest, body: RequestBody?, destination: Destination,
        resuming resumption: DownloadResumption?, delegate: any LoadingTaskDelegate, owner: (any AnyObject & Sendable)?,
        clientIdentity: TransportClientIdentity?, logger: Logger? = nil
    ) {
        self.session = session
        self.clientIdentity = clientIdentity
        self.logger = logger
        self.taskIdentifier = identifier
        self.ownerState = Mutex(owner)
        self.originalRequest = request
        self.destination = destination
        self.delegate = delegate
        var state = State(request: TaskRequest(request, body: body))
        if let resumption, case .file = destination { state.download = DownloadFileState(continuing: resumption) }
        self.state = Mutex(state)
    }

    /// The task's state, request, response and byte counts now.
    package var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Whether ``resume()`` has started the task (once started, it stays so).
    package var isStarted: Bool { state.withLock { $0.machine.state != .initialized } }

    /// Starts the task, or lets a suspended one go on.
    package func resume() {
        perform(state.withLock { $0.machine.resume(at: session.clock.now) })
    }

    /// Marks the task suspended: one not started yet waits for ``resume()``. A transfer under way
    /// goes on (the transport has no pause), as a suspended URLSession task's buffered bytes do.
    package func suspend() {
        state.withLock { $0.machine.suspend() }
    }

    /// Stops the task wherever it is; it completes with `.cancelled` (once).
    package func cancel() {
        perform(state.withLock { $0.machine.cancel() })
    }

    /// Cancels a download, keeping its partial file for a later task to continue: `handler` hears
    /// what that task needs (nil when the download cannot be continued), before the task completes.
    /// It is not called when the task had already completed or been cancelled.
    package func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumption?) -> Void) {
        // A task not yet cancelled or completed will complete as cancelled, and hears the handler then (even
        // when the cancel waits for the cache lookup to report, and so asks for nothing now).
        perform(state.withLock { $0.machine.cancel(resumeDataHandler: handler) })
    }

    // MARK: Performing the machine's actions

    func perform(_ action: LoadingTaskStateMachine.Action) {
        switch action {
        case .none:
            return
        case .lookUpCache:
            lookUpCache()
        case .startExchange(let hop):
            startExchange(hop: hop)
        case .cancelExchange:
            state.withLock { $0.work.cancel }?()
        case .waitForConnectivity(let tellDelegate):
            if tellDelegate { delegate.loadingTaskIsWaitingForConnectivity(self) }
            waitForConnectivity()
        case .askRedirect:
            let (received, proposed) = state.withLock { ($0.response, $0.machine.held.proposedRequest) }
            let response = received?.httpURLResponse
            guard let response, let proposed else {
                return perform(state.withLock { $0.machine.redirectDeclined() })
            }
            delegate.loadingTask(self, willPerformHTTPRedirection: response, newRequest: proposed) { next in
                self.redirectDecided(next)
            }
        case .askBodyStream:
            delegate.loadingTaskNeedsNewBodyStream(self) { stream in
                let action = self.state.withLock { state in
                    if let stream, case .awaitingBodyStream = state.machine.state { state.request.replaceBodyStream(with: stream) }
                    return state.machine.bodyStreamProvided(stream != nil)
                }
                self.perform(action)
            }
        case .askChallenge:
            guard let challenge = state.withLock({ $0.machine.held.challenge }) else {
                return perform(state.withLock { $0.machine.challengeDecided(retry: false) })
            }
            delegate.loadingTask(self, didReceive: challenge) { disposition in self.challengeDecided(disposition) }
        case .deliverResponse:
            deliverResponse(state.withLock { $0.response })
        case .receiveBody:
            receiveBody()
        case .complete(let failure):
            complete(failure)
        }
    }

    // MARK: Exchanges

    /// What an exchange starts from, read as it starts.
    private typealias ExchangeStart = (
        request: URLRequest, body: RequestBody?, generation: Int, authorization: String?, validators: [(name: String, value: String)],
        resumption: DownloadResumption?, hasLeftOrigin: Bool, resourceTimeRemaining: TimeAmount?
    )

    private func startExchange(hop: Int) {
        let networkChanges = session.connectivityMonitor?.changeCount
        // The resource timeout bounds the whole task, its redirects and challenges included: each
        // exchange gets what is left of it, and none starts (or counts as a transaction) once it is spent.
        let started = state.withLock { state -> ExchangeStart? in
            let resourceTimeRemaining = session.resourceTimeRemaining(since: state.machine.resumedAt ?? session.clock.now)
            if let resourceTimeRemaining, resourceTimeRemaining <= .zero { return nil }
            if let networkChanges { state.connectivity.changesAtExchangeStart = networkChanges }
            let authorization = state.answers.exchangeStarted()
            state.counts.exchangeStarted()
            state.log.exchangeStarted(at: Date())
            state.cache.exchangeStarted(at: session.cachePolicy.now())
            let generation = state.work.start()
            return (
                state.request.current, state.request.body, generation, authorization,
                state.cache.validators(forHop: hop), state.download.resumption, state.machine.hasLeftOrigin, resourceTimeRemaining
            )
        }
        guard let (request, body, generation, authorization, validators, resumption, hasLeftOrigin, resourceTimeRemaining) = started
        else {
            let url = state.withLock { $0.request.current.url } ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            return exchangeFailed(TransportError(.timedOut, "the resource timeout passed").urlError(for: url))
        }
        guard let url = request.url else {
            return exchangeFailed(URLError(.badURL))
        }
        // A WebSocket is always opened on the network: no URL protocol, local resource or cache
        // answers it, as with URLSessionWebSocketTask.
        if case .webSocket(let subprotocols, let maximumMessageSize) = destination {
            let options = TransportWebSocketOptions(subprotocols: subprotocols, maximumMessageSize: maximumMessageSize)
            return openWebSocket(
                request, options: options, authorization: authorization, resourceTimeRemaining: resourceTimeRemaining,
                withholdingOriginBoundFields: hasLeftOrigin, generation: generation)
        }
        if let protocolClass = URLProtocolLoad.protocolClass(for: request, among: session.protocolClasses) {
            return loadThroughProtocol(protocolClass, request: request, body: body, generation: generation)
        }
        if LocalResource.isLocal(url) { return loadLocalResource(url, for: request, generation: generation) }
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            return exchangeFailed(URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        }
        var sent = request
        prepareForWire(&sent, authorization: authorization)
        // And a revalidation's conditions.
        for validator in validators { sent.setValue(validator.value, forHTTPHeaderField: validator.name) }
        // And a resumed download's range.
        let continuing = resumption.flatMap { continueDownload(from: $0, on: &sent) }
        var transportRequest = session.transportRequest(
            for: sent, url: url, body: body, resourceTimeRemaining: resourceTimeRemaining, withholdingOriginBoundFields: hasLeftOrigin)
        transportRequest.logger = logger
        transportRequest.clientIdentity = clientIdentity
        // Progress closures hold the task strongly, as the completion does; the exchange that keeps them
        // is let go when the task completes (`complete` drops its cancel work and streamed response). A
        // weak reference would give the task a side table, and every retain and release of it for the
        // rest of its life the slow path.
        // A request without a body reports no upload progress, so it needs no closure (an allocation).
        switch transportRequest.body {
        case .none: break
        default: transportRequest.onUploadProgress = { sent, expected in self.didSendBody(totalBytesSent: sent, expected: expected) }
        }
        // A download counts its progress as bytes written to its file (a continued one's include the
        // offset), as URLSession's `didWriteData` does; the transport may have read further ahead.
        switch destination {
        case .memory, .stream:
            transportRequest.onDownloadProgress = { received, expected in
                self.didReceiveBody(totalBytes: received, expected: expected)
            }
        case .file, .webSocket:
            break
        }
        state.withLock { $0.cache.headersSent(transportRequest.headers) }
        switch destination {
        case .webSocket:
            // Opened above, before any of this: unreachable, and harmless if it were reached.
            exchangeFailed(URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        case .memory:
            let handle = session.transport.execute(transportRequest, collectingUpTo: session.maximumBodySize) { outcome in
                switch outcome {
                case .success(let collected):
                    let wire = ReceivedResponse(head: collected.head, url: url)
                    let transaction = TransactionMetrics(
                        collected.completion.metrics, request: request, response: wire, clock: self.wallClock)
                    self.withStorageWrites(for: collected.head, response: wire, request: request) {
                        self.outcome(of: collected.head, wire: wire, request: request)
                    } then: { outcome in
                        let body = outcome.storedBody.map { self.storedBody($0) } ?? collected.body
                        self.decide(outcome.response, outcome.verdict, body: .collected(body)) {
                            $0.log.record(transaction)
                        }
                    }
                case .failure(let error):
                    self.exchangeFailed(error.urlError(for: url), fromNetwork: true)
                }
            }
            setCancelWork(handle.cancel, generation: generation)
        case .file, .stream:
            let work = Task {
                do {
                    let streamed = try await session.transport.execute(transportRequest)
                    let wire = ReceivedResponse(head: streamed.head, url: url)
                    let outcome = await self.withStorageWrites(for: streamed.head, response: wire, request: request) {
                        self.outcome(of: streamed.head, wire: wire, request: request)
                    }
                    if let continuing, outcome.verdict.verdict == .final, outcome.storedBody == nil,
                        let response = outcome.response?.httpURLResponse,
                        continuing.continuation(after: response) == .askAgain
                    {
                        // Not the bytes asked for: read and drop them, then ask for the whole body.
                        for try await _ in streamed.body {}
                        let transaction = try await self.transaction(of: streamed, request: request, response: wire)
                        return self.askAgainWithoutRange(recording: transaction)
                    }
                    let before = self.bodyBeforeDecision(
                        verdict: outcome.verdict.verdict, stored: outcome.storedBody != nil, head: streamed.head,
                        continuing: continuing != nil)
                    guard before != .unread else {
                        // Its body is read once the delegate has decided.
                        return self.decide(outcome.response, outcome.verdict, body: .streamed(streamed, request: request))
                    }
                    // A redirect's or a challenge's body (or a 304's, empty) is read first, keeping the
                    // connection for the next hop, and the exchange is a transaction of the task's, as
                    // with URLSession.
                    let kept = try await before.read(streamed.body)
                    let transaction = try await self.transaction(of: streamed, request: request, response: wire)
                    let body = outcome.storedBody.map { self.storedBody($0) } ?? kept
                    self.decide(outcome.response, outcome.verdict, body: body.map { .collected($0) } ?? .none) {
                        $0.log.record(transaction)
                    }
                } catch {
                    self.exchangeFailed(LoadingSession.urlError(error, url: url), fromNetwork: true)
                }
            }
            setCancelWork({ work.cancel() }, generation: generation)
        }
    }

    /// Adds what goes on the wire only, as with URLSession (the task's requests do not show it): the
    /// cookies and a challenge's answer.
    func prepareForWire(_ request: inout URLRequest, authorization: String?) {
        session.cookiePolicy.prepare(&request)
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
    }

    /// Records how to stop the work just started, unless newer work has started since (a fast
    /// exchange may already have led to the next hop) or the task has completed; a cancel that came
    /// meanwhile did not see it, so it is applied now.
    func setCancelWork(_ cancelWork: @escaping @Sendable () -> Void, generation: Int) {
        let cancelNow = state.withLock { state -> Bool in
            guard state.machine.state != .completed, state.work.setCancel(cancelWork, for: generation) else { return false }
            return state.machine.isCancelled
        }
        if cancelNow { cancelWork() }
    }

    /// The exchange failed before its response, or while its body arrived. One on the network
    /// (`fromNetwork`) that found no route waits for connectivity instead, when the session does: a
    /// `.notConnectedToInternet`, or a name that could not be resolved while no route leaves the
    /// machine (what URLSession reports as offline). Its attempt is recorded as a transaction first.
    func exchangeFailed(_ error: URLError, fromNetwork: Bool = false) {
        let monitor = fromNetwork ? session.connectivityMonitor : nil
        let offline =
            monitor.map { monitor in
                error.code == .notConnectedToInternet || (error.code == .cannotFindHost && monitor.isOffline)
            } ?? false
        perform(
            state.withLock { state in
                if offline, case .exchanging = state.machine.state, !state.machine.isCancelled {
                    state.recordUnfinishedExchange()
                    return state.machine.exchangeFoundNoRoute()
                }
                return state.machine.exchangeFailed(error)
            })
    }

    /// Waits for the network to change since the failed exchange started, then sends it again; fails
    /// with `.timedOut` once the resource timeout, counted from the task's resume, has passed.
    private func waitForConnectivity() {
        let url = state.withLock { $0.request.current.url } ?? originalRequest.url ?? URL(fileURLWithPath: "/")
        let timedOut = TransportError(.timedOut, "timed out waiting for connectivity").urlError(for: url)
        guard let monitor = session.connectivityMonitor else {
            // Unreachable: only a session with a monitor waits. Failing beats waiting forever.
            return exchangeFailed(URLError(.notConnectedToInternet, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        }
        let clock = session.clock
        let (after, generation, deadline, needsTimer) = state.withLock { state in
            let wait = state.connectivity
            return (
                wait.changesAtExchangeStart, state.work.start(), session.resourceDeadline(since: state.machine.resumedAt ?? clock.now),
                wait.timer == nil
            )
        }
        if let deadline {
            guard deadline > clock.now else { return exchangeFailed(timedOut) }
            if needsTimer {
                let timer = clock.scheduleTask(deadline: deadline) {
                    self.connectivityWaitTimedOut()
                }
                state.withLock { $0.connectivity.timer = timer }
            }
        }
        let stop = monitor.waitForChange(after: after) { outcome in
            switch outcome {
            case .changed:
                self.perform(self.state.withLock { $0.machine.connectivityChanged() })
            case .cancelled:
                let fired = self.state.withLock { $0.connectivity.timedOut }
                self.exchangeFailed(fired ? timedOut : TransportError.cancelled.urlError(for: url))
            }
        }
        setCancelWork(stop, generation: generation)
        // A timeout that fired before the wait could be stopped (it found nothing to stop) ends it now.
        if state.withLock({ $0.connectivity.timedOut && $0.work.generation == generation }) { stop() }
    }

    /// The resource timeout passed: a task waiting for connectivity stops waiting, and its wait reports
    /// `.timedOut`; one sending an exchange meanwhile is bounded by that exchange's own limit, and its
    /// next wait, if any, fails at once.
    private func connectivityWaitTimedOut() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            state.connectivity.timedOut = true
            guard case .waitingForConnectivity = state.machine.state else { return nil }
            return state.work.cancel
        }
        stop?()
    }

    // MARK: Completion

    /// The error a task completes with: nil on success, else URLSession's for `failure` (the
    /// exchange's own for a failed exchange). A download that can be continued carries its resume
    /// data in it, as URLSession's does.
    private static func error(
        _ failure: LoadingTaskStateMachine.Failure?, exchangeError: URLError?, url: URL?, resumption: DownloadResumption?
    ) -> URLError? {
        let url = url ?? URL(fileURLWithPath: "/")
        let error: URLError
        switch failure {
        case nil: return nil
        case .cancelled: error = TransportError.cancelled.urlError(for: url)
        case .tooManyRedirects: error = URLError(.httpTooManyRedirects, userInfo: [NSURLErrorFailingURLErrorKey: url])
        case .bodyStreamExhausted: error = URLError(.requestBodyStreamExhausted, userInfo: [NSURLErrorFailingURLErrorKey: url])
        case .resourceUnavailable: error = URLError(.resourceUnavailable, userInfo: [NSURLErrorFailingURLErrorKey: url])
        case .exchangeFailed: error = exchangeError ?? URLError(.unknown, userInfo: [NSURLErrorFailingURLErrorKey: url])
        }
        return resumption.map { URLError(error.code, userInfo: error.userInfo.merging([resumeDataKey: $0.encoded()]) { $1 }) } ?? error
    }

    private func complete(_ failure: LoadingTaskStateMachine.Failure?) {
        let (resumption, resumeDataHandler) = settleDownloadFile(failure)
        let (finalError, webSocket, transactions, redirects) = state.withLock { state in
            // Nothing more will run: drop what the task held (the machine let go of a body not read).
            state.work.end()
            state.connectivity.timer?.cancel()
            state.connectivity.timer = nil
            state.recordUnfinishedExchange()
            defer { state.webSocket = nil }
            let error = Self.error(
                failure, exchangeError: state.machine.exchangeError, url: state.request.current.url ?? originalRequest.url,
                resumption: resumption)
            state.machine.settled(error: error)
            return (error, state.webSocket, state.log.transactions, state.machine.redirects)
        }
        // A WebSocket left open (the task cancelled, or its response refused, before its messages
        // were read) is closed now.
        webSocket?.cancel()
        resumeDataHandler?(resumption)
        let metrics = TaskMetrics(
            transactionMetrics: transactions, taskInterval: DateInterval(start: started, end: max(started, Date())),
            redirectCount: redirects)
        delegate.loadingTask(self, didFinishCollecting: metrics)
        delegate.loadingTask(self, didCompleteWithError: finalError)
        ownerState.withLock { $0 = nil }
    }
}
