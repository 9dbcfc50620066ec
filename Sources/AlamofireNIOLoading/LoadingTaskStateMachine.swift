package import AlamofireNIOTransport
package import Foundation
package import NIOCore

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// The life of one ``LoadingTask``, as a value: each event returns the one action the task performs
/// next, after releasing its lock. It holds the facts its decisions need, and what a response
/// leaves for a decision (``HeldResponse``: the request a redirect proposes, the challenge, the
/// body), from the response until the decision that uses it; the task's requests and the
/// transactions stay with the task.
///
/// ```
/// initialized ─resume─▶ lookingUpCache ─miss─▶ exchanging(hop) ─response─▶ (decided at once, no state)
///                             ├─hit─▶ awaitingDisposition (the stored response, no exchange)
///                             ├─hit, a stored redirect─▶ awaitingRedirect(hop 0)
///                             └─nothing stored, may not load─▶ completed
///   response: a redirect to ask about ─▶ awaitingRedirect ─follow─▶ exchanging(hop + 1)
///                                                    ├─ a stream body to replace ─▶ awaitingBodyStream
///                                                    └─ not followed ─▶ awaitingDisposition
///             a challenge to answer   ─▶ awaitingChallenge ─retry─▶ exchanging(hop + 1)
///                                                    ├─ a stream body to replace ─▶ awaitingBodyStream
///                                                    └─ not retried ─▶ awaitingDisposition
///             otherwise               ─▶ awaitingDisposition ─allow─▶ receivingBody ─▶ completed
///                                                           └─refuse─▶ completed (cancelled)
///   awaitingBodyStream ─a new stream─▶ exchanging(hop + 1)
///                      └─none─▶ completed (the body stream is exhausted)
///   exchanging(hop) ─a continued download's 416 or wrong range─▶ exchanging(hop + 1), without a range
///   exchanging(hop) ─no route, the session waits for connectivity─▶ waitingForConnectivity(hop)
///                                                       ─the network changed─▶ exchanging(hop)
///   exchanging, waitingForConnectivity, receivingBody ─failure─▶ completed
/// ```
/// Cancelling while an exchange or a body is under way asks the task to stop it and waits for it
/// to report; cancelling while a delegate decides completes at once (the late answer is ignored).
///
/// What is held lives as long as the decision it serves: a followed redirect or an answered
/// challenge lets go of its response's body, a declined one keeps it as the result, every new
/// exchange starts with nothing held, and completing lets go of everything.
package struct LoadingTaskStateMachine: Sendable {
    package enum State: Equatable, Sendable {
        case initialized
        case lookingUpCache
        case exchanging(hop: Int)
        /// The exchange found no route to the network; the task waits for it to change.
        case waitingForConnectivity(hop: Int)
        case awaitingRedirect(hop: Int)
        case awaitingBodyStream(hop: Int)
        case awaitingChallenge(hop: Int)
        case awaitingDisposition(hop: Int)
        case receivingBody(hop: Int)
        case completed
    }

    /// Why a task ended without a response, in URLSession's codes.
    package enum Failure: Equatable, Sendable {
        case cancelled
        case tooManyRedirects
        case bodyStreamExhausted
        /// `.returnCacheDataDontLoad` found nothing stored.
        case resourceUnavailable
        /// The exchange failed: the error is the machine's ``exchangeError``.
        case exchangeFailed
    }

    package enum Action: Equatable, Sendable {
        case none
        /// Look for a stored response (the cache policy's step).
        case lookUpCache
        /// Send the current request; `hop` 0 is the first exchange, each redirect or challenge adds one.
        case startExchange(hop: Int)
        /// Stop the exchange or body under way (or the wait for connectivity); it will report its end.
        case cancelExchange
        /// Wait for the network to change, telling the delegate first when `tellDelegate` (the
        /// first wait of the task: URLSession tells it at most once).
        case waitForConnectivity(tellDelegate: Bool)
        /// Ask the delegate whether to follow the redirect.
        case askRedirect
        /// Ask the delegate for a new body stream for the next hop.
        case askBodyStream
        /// Ask the delegate (then the credential policy) how to answer the challenge.
        case askChallenge
        /// Tell the delegate of the response and wait for its disposition.
        case deliverResponse
        /// Hand the body over (a collected one at once, a streamed one to its file).
        case receiveBody
        /// Report metrics and completion; nil means success.
        case complete(Failure?)
    }

    /// What the task found when an exchange produced a response.
    package enum ResponseVerdict: Equatable, Sendable {
        case final
        case redirect
        case challenge
    }

    /// URLSession's limit on redirects; one more fails with `.httpTooManyRedirects`.
    package static let maximumRedirects = 16

    /// How many challenges one task answers; the next challenging response is the result, so a
    /// delegate that always answers cannot loop forever.
    package static let maximumChallenges = 8

    package private(set) var state: State = .initialized
    package private(set) var isCancelled = false
    /// What the latest response left for the decision on it (empty while none waits).
    package private(set) var held = HeldResponse()
    /// When the task was first resumed, on the session's clock: its resource timeout counts from there.
    package private(set) var resumedAt: NIODeadline?
    /// Whether the task's end is settled (its download file kept or removed, its error made): the
    /// task reads as completed from then on, not from the machine's last step.
    package private(set) var isSettled = false
    /// The error the task completed with, once settled (nil after a success), as
    /// `URLSessionTask.error` reports it.
    package private(set) var completionError: URLError?
    /// Hears the resumption a cancel produced (a download's cancel that asked for resume data).
    private var resumeDataHandler: (@Sendable (DownloadResumption?) -> Void)?
    /// Redirects followed so far.
    package private(set) var redirects = 0
    /// Challenges answered so far.
    package private(set) var challengesAnswered = 0
    /// The first error an exchange (or the WebSocket's keep-alive) reported: the one the task fails
    /// with when it ends as ``Failure/exchangeFailed``. A later error (the cancel that stops the
    /// exchange after a missed pong, say) does not replace it.
    package private(set) var exchangeError: URLError?
    /// Whether a followed redirect went to another origin. It stays so for the rest of the task:
    /// the session's origin-bound fields (its default headers) are withheld from every later hop,
    /// even one that comes back (``RedirectPolicy``).
    package private(set) var hasLeftOrigin = false
    /// Whether the task has waited for connectivity (the delegate heard of it).
    package private(set) var hasWaitedForConnectivity = false
    /// Whether the task is marked suspended: one not started waits for ``resume()``; a transfer
    /// under way goes on (the transport has no pause), as a suspended URLSession task's does.
    package private(set) var isSuspended = false

    package init() {}

    /// What `URLSessionTask.state` would say: completed once settled, canceling from the cancel until
    /// then, suspended before the first resume or while marked so, running otherwise.
    package var status: LoadingTask.Status {
        switch state {
        case .completed where isSettled: .completed
        case _ where isCancelled: .canceling
        case .initialized: .suspended
        default: isSuspended ? .suspended : .running
        }
    }

    /// Starts the task at `now` (the first resume only), or lets a suspended one go on.
    package mutating func resume(at now: NIODeadline) -> Action {
        isSuspended = false
        guard state == .initialized else { return .none }
        resumedAt = now
        state = .lookingUpCache
        return .lookUpCache
    }

    /// Marks the task suspended, unless it has completed.
    package mutating func suspend() {
        if state != .completed { isSuspended = true }
    }

    /// The cache had nothing to serve.
    package mutating func cacheMissed() -> Action {
        guard state == .lookingUpCache else { return .none }
        if isCancelled { return complete(.cancelled) }
        return startExchange(hop: 0)
    }

    /// The cache answers with a stored response, holding its body: it is delivered without an
    /// exchange, or, when it redirects (`held` proposes a request), put to the delegate as one from
    /// the network would be.
    package mutating func cacheHit(holding held: HeldResponse = HeldResponse()) -> Action {
        guard state == .lookingUpCache else { return .none }
        if isCancelled { return complete(.cancelled) }
        self.held = held
        if held.proposedRequest != nil {
            state = .awaitingRedirect(hop: 0)
            return .askRedirect
        }
        state = .awaitingDisposition(hop: 0)
        return .deliverResponse
    }

    /// Nothing stored, and the request may not load.
    package mutating func cacheUnavailable() -> Action {
        guard state == .lookingUpCache else { return .none }
        return complete(isCancelled ? .cancelled : .resourceUnavailable)
    }

    /// An exchange produced a response head (and, when collected, its body), leaving `held` for the
    /// decision on it.
    package mutating func responseReceived(_ verdict: ResponseVerdict, holding held: HeldResponse = HeldResponse()) -> Action {
        guard case .exchanging(let hop) = state else { return .none }
        if isCancelled { return complete(.cancelled) }
        self.held = held
        switch verdict {
        case .redirect:
            guard redirects < Self.maximumRedirects else { return complete(.tooManyRedirects) }
            state = .awaitingRedirect(hop: hop)
            return .askRedirect
        case .challenge:
            guard challengesAnswered < Self.maximumChallenges else {
                state = .awaitingDisposition(hop: hop)
                return .deliverResponse
            }
            state = .awaitingChallenge(hop: hop)
            return .askChallenge
        case .final:
            state = .awaitingDisposition(hop: hop)
            return .deliverResponse
        }
    }

    /// A continued download's response was not the range asked for (its body was dropped): the
    /// request goes again, without a range.
    package mutating func restartRequested() -> Action {
        guard case .exchanging(let hop) = state else { return .none }
        if isCancelled { return complete(.cancelled) }
        return startExchange(hop: hop + 1)
    }

    /// The exchange found no route to the network (`.notConnectedToInternet`), in a session that
    /// waits for connectivity: the task waits for the network to change, then sends the same hop again.
    package mutating func exchangeFoundNoRoute() -> Action {
        guard case .exchanging(let hop) = state else { return .none }
        if isCancelled { return complete(.cancelled) }
        state = .waitingForConnectivity(hop: hop)
        defer { hasWaitedForConnectivity = true }
        return .waitForConnectivity(tellDelegate: !hasWaitedForConnectivity)
    }

    /// The network changed while the task waited: the same hop is sent again.
    package mutating func connectivityChanged() -> Action {
        guard case .waitingForConnectivity(let hop) = state else { return .none }
        if isCancelled { return complete(.cancelled) }
        return startExchange(hop: hop)
    }

    /// Keeps `error` as the task's error, unless one came first.
    package mutating func recordError(_ error: URLError) {
        if exchangeError == nil { exchangeError = error }
    }

    /// The exchange failed before a response, or while its body arrived (or the wait for
    /// connectivity ended without a change), with `error` (kept unless an error came first). A
    /// failure reported while nothing runs is stale and changes nothing.
    package mutating func exchangeFailed(_ error: URLError) -> Action {
        switch state {
        case .exchanging, .waitingForConnectivity, .receivingBody:
            recordError(error)
            return complete(isCancelled ? .cancelled : .exchangeFailed)
        default:
            return .none
        }
    }

    /// The delegate declined a redirect: the 3xx response is the result.
    package mutating func redirectDeclined() -> Action {
        redirectDecided(follow: false, needsBodyStream: false, leavesOrigin: false)
    }

    /// The delegate decided on a redirect: `follow` false delivers the 3xx response as the result.
    /// `needsBodyStream` says the next request repeats a body that cannot be replayed;
    /// `leavesOrigin` that it goes to another origin than the request it follows.
    package mutating func redirectDecided(follow: Bool, needsBodyStream: Bool, leavesOrigin: Bool) -> Action {
        guard case .awaitingRedirect(let hop) = state else { return .none }
        guard follow else {
            // The 3xx response is the result: its body stays, for the delegate to receive.
            held.proposedRequest = nil
            state = .awaitingDisposition(hop: hop)
            return .deliverResponse
        }
        held = HeldResponse()
        redirects += 1
        if leavesOrigin { hasLeftOrigin = true }
        if needsBodyStream {
            state = .awaitingBodyStream(hop: hop)
            return .askBodyStream
        }
        return startExchange(hop: hop + 1)
    }

    /// The delegate gave a new body stream for the next hop, or none.
    package mutating func bodyStreamProvided(_ provided: Bool) -> Action {
        guard case .awaitingBodyStream(let hop) = state else { return .none }
        guard provided else { return complete(.bodyStreamExhausted) }
        return startExchange(hop: hop + 1)
    }

    /// The challenge was answered: `retry` sends the request again with a credential; otherwise
    /// the challenging response is the result. `needsBodyStream` says the request repeats a body
    /// that cannot be replayed.
    package mutating func challengeDecided(retry: Bool, needsBodyStream: Bool = false) -> Action {
        guard case .awaitingChallenge(let hop) = state else { return .none }
        guard retry else {
            // The challenging response is the result: its body stays, for the delegate to receive.
            held.challenge = nil
            state = .awaitingDisposition(hop: hop)
            return .deliverResponse
        }
        held = HeldResponse()
        challengesAnswered += 1
        if needsBodyStream {
            state = .awaitingBodyStream(hop: hop)
            return .askBodyStream
        }
        return startExchange(hop: hop + 1)
    }

    /// The delegate's answer to the response: `allow` receives the body, otherwise the task ends
    /// as cancelled.
    package mutating func dispositionDecided(allow: Bool) -> Action {
        guard case .awaitingDisposition(let hop) = state else { return .none }
        guard allow else { return complete(.cancelled) }
        state = .receivingBody(hop: hop)
        return .receiveBody
    }

    /// Takes the held body to hand it over, once the delegate has allowed the response (nothing
    /// before, or once taken).
    package mutating func takeHeldBody() -> HeldResponse.Body {
        guard case .receivingBody = state else { return .none }
        defer { held.body = .none }
        return held.body
    }

    /// The whole body was handed over.
    package mutating func bodyReceived() -> Action {
        guard case .receivingBody = state else { return .none }
        return complete(isCancelled ? .cancelled : nil)
    }

    /// Stops the task; `resumeDataHandler` (a download's cancel that asks for resume data) hears the
    /// resumption as the task completes, unless the task had already been cancelled or completed.
    package mutating func cancel(resumeDataHandler: (@Sendable (DownloadResumption?) -> Void)? = nil) -> Action {
        guard !isCancelled, state != .completed else { return .none }
        isCancelled = true
        self.resumeDataHandler = resumeDataHandler
        switch state {
        case .initialized, .awaitingRedirect, .awaitingBodyStream, .awaitingChallenge, .awaitingDisposition:
            return complete(.cancelled)
        case .lookingUpCache:
            // The lookup reports back and finds the task cancelled.
            return .none
        case .exchanging, .waitingForConnectivity, .receivingBody:
            return .cancelExchange
        case .completed:
            return .none
        }
    }

    /// Takes the handler of a cancel that asked for resume data, if one did (once).
    package mutating func takeResumeDataHandler() -> (@Sendable (DownloadResumption?) -> Void)? {
        defer { resumeDataHandler = nil }
        return resumeDataHandler
    }

    /// The task's end is settled, with `error` (nil for a success): it reads as completed from now on.
    package mutating func settled(error: URLError?) {
        guard state == .completed, !isSettled else { return }
        completionError = error
        isSettled = true
    }

    private mutating func startExchange(hop: Int) -> Action {
        // A new exchange leaves a response of its own.
        held = HeldResponse()
        state = .exchanging(hop: hop)
        return .startExchange(hop: hop)
    }

    private mutating func complete(_ failure: Failure?) -> Action {
        // Nothing more will be decided: a body not read is let go.
        held = HeldResponse()
        state = .completed
        return .complete(failure)
    }
}

/// What a response leaves for the decision on it: the request a redirect proposes, the challenge
/// to answer, and its body (collected, or still to be read from the exchange).
package struct HeldResponse: Sendable {
    package enum Body: Sendable {
        case none
        /// Read already: collected in memory, stored in the cache, or a redirect's or a challenge's
        /// read to its end before the decision.
        case collected(ByteBuffer)
        /// A final response whose body is still to be read (streamed, or written to a file), with
        /// the request it answers.
        case streamed(TransportResponse, request: URLRequest)

        /// The collected bytes, if the body was read already.
        package var collected: ByteBuffer? {
            if case .collected(let buffer) = self { buffer } else { nil }
        }
    }

    /// The request a redirect would send next (nil when the response does not redirect).
    package var proposedRequest: URLRequest?
    /// The challenge to answer (nil when the response does not challenge).
    package var challenge: LoadingChallenge?
    package var body: Body = .none

    package init(proposedRequest: URLRequest? = nil, challenge: LoadingChallenge? = nil, body: Body = .none) {
        self.proposedRequest = proposedRequest
        self.challenge = challenge
        self.body = body
    }
}
