import AFSynchronization
import AlamofireNIOTransport
import Foundation
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a task makes of each response head (the policies' verdict), and how it goes on after the
/// delegate has decided on a redirect or a challenge.
extension LoadingTask {
    /// What the policies make of a response: final, a redirect to ask about, or a challenge.
    struct Verdict: Sendable {
        var verdict = LoadingTaskStateMachine.ResponseVerdict.final
        var proposed: URLRequest?
        var challenge: LoadingChallenge?
    }

    /// A response head as the task goes on with it: the response to deliver (a 304 to a
    /// revalidation stands for the stored response, whose body comes with it) and the verdict.
    struct HeadOutcome: Sendable {
        var response: ReceivedResponse?
        var storedBody: Data?
        var verdict: Verdict
    }

    /// Applies the policies to a response head: cookies are stored, a 304 to a revalidation is
    /// merged into the stored response, then the verdict. Call it through ``withStorageWrites(for:response:request:_:)``.
    func outcome(of head: HTTPResponseHead, wire response: ReceivedResponse?, request: URLRequest) -> HeadOutcome {
        let (final, stored) = revalidated(response, for: request)
        let verdict = verdict(
            on: final, setCookies: head.headers["Set-Cookie"], wwwAuthenticate: head.headers["WWW-Authenticate"], for: request)
        return HeadOutcome(response: final, storedBody: stored, verdict: verdict)
    }

    /// Runs `work` at once, or on a Dispatch thread when handling `response` writes to a cookie
    /// storage or a cache: a persistent `HTTPCookieStorage` (the shared one) writes its file on
    /// every change and a `URLCache` lists its directory, which must block neither an event loop nor
    /// the concurrency pool.
    func withStorageWrites<Result: Sendable>(
        for head: HTTPResponseHead, response: ReceivedResponse?, request: URLRequest, _ work: @escaping @Sendable () -> Result,
        then: @escaping @Sendable (Result) -> Void
    ) {
        let writesCache =
            response.map { response in
                session.cachePolicy.invalidates(after: request, response: response)
                    || (response.statusCode == 304 && state.withLock { $0.cache.isRevalidating })
            } ?? false
        guard writesCache || session.cookiePolicy.stores(head.headers["Set-Cookie"], for: request) else { return then(work()) }
        DispatchQueue.global().async { then(work()) }
    }

    /// ``withStorageWrites(for:response:request:_:then:)`` for async code.
    func withStorageWrites<Result: Sendable>(
        for head: HTTPResponseHead, response: ReceivedResponse?, request: URLRequest, _ work: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            withStorageWrites(for: head, response: response, request: request, work) { continuation.resume(returning: $0) }
        }
    }

    /// Stores the response's cookies and settles an answer to a challenge (a credential the
    /// response accepted is stored; a refusal is counted), invalidates the cache after an unsafe
    /// method, then asks the redirect and authentication policies.
    func verdict(on response: ReceivedResponse?, setCookies: [String], wwwAuthenticate: [String], for request: URLRequest) -> Verdict {
        guard let response else { return Verdict() }
        session.cookiePolicy.store(setCookies, for: request)
        let offersStaleDigest =
            response.statusCode == 401
            && AuthenticationChallengeOffer.parse(wwwAuthenticate).contains {
                $0.scheme == "digest" && $0.parameters["stale"]?.lowercased() == "true"
            }
        let (refused, accepted) = state.withLock {
            $0.answers.responseReceived(statusCode: response.statusCode, offersStaleDigest: offersStaleDigest)
        }
        if let accepted { session.authenticationPolicy.store(accepted.credential, for: accepted.space) }
        session.cachePolicy.invalidate(after: request, response: response)
        if let proposed = session.redirectPolicy.nextRequest(after: request, response: response) {
            return Verdict(verdict: .redirect, proposed: proposed)
        }
        if let challenge = session.authenticationPolicy.challenge(
            in: response, wwwAuthenticate: wwwAuthenticate, request: request, previousFailureCount: refused)
        {
            return Verdict(verdict: .challenge, challenge: challenge)
        }
        return Verdict()
    }

    /// Lets the machine decide what comes after a response, holding `body` and what the verdict
    /// found for the decision; `record` keeps the rest (a transaction, say) in the same step.
    func decide(
        _ response: ReceivedResponse?, _ verdict: Verdict, body: HeldResponse.Body = .none,
        recording record: (inout State) -> Void = { _ in }
    ) {
        let action = state.withLock { state in
            record(&state)
            state.response = response
            state.log.responseArrived(response)
            state.cache.responseArrived(at: session.cachePolicy.now())
            let held = HeldResponse(proposedRequest: verdict.proposed, challenge: verdict.challenge, body: body)
            return state.machine.responseReceived(verdict.verdict, holding: held)
        }
        // The response just kept is the one to deliver: no second look.
        guard action == .deliverResponse else { return perform(action) }
        deliverResponse(response)
    }

    /// The delegate's answer to a redirect: follow `next`, or (nil) make the redirect the result.
    func redirectDecided(_ next: URLRequest?) {
        let action = state.withLock { state -> LoadingTaskStateMachine.Action in
            guard let next else { return state.machine.redirectDeclined() }
            // An answer that comes after a cancel changes nothing.
            guard case .awaitingRedirect = state.machine.state else { return .none }
            let (leavesOrigin, needsBodyStream) = state.request.follow(next)
            // An answer is for the URL challenged; the next one answers its own challenge.
            state.answers.redirected()
            return state.machine.redirectDecided(follow: true, needsBodyStream: needsBodyStream, leavesOrigin: leavesOrigin)
        }
        perform(action)
    }

    /// Answers the challenge with the delegate's credential (or, by default, the configuration's
    /// stored one, unless an answer was already refused), or lets the 401 be the result. The answer
    /// is made outside the task's lock (a Digest `auth-int` answer hashes the whole body).
    func challengeDecided(_ disposition: LoadingChallenge.Disposition) {
        guard case .cancelAuthenticationChallenge = disposition else {
            let (challenge, request, body) = state.withLock { ($0.machine.held.challenge, $0.request.current, $0.request.bodyInMemory) }
            let credential: URLCredential? =
                switch disposition {
                case .useCredential(let given): given
                case .performDefaultHandling:
                    challenge.flatMap {
                        $0.previousFailureCount == 0 ? session.authenticationPolicy.defaultCredential(for: $0.protectionSpace) : nil
                    }
                case .rejectProtectionSpace, .cancelAuthenticationChallenge: nil
                }
            let authorization = challenge.flatMap { challenge in
                credential.flatMap {
                    session.authenticationPolicy.authorization(answering: challenge, with: $0, request: request, body: body)
                }
            }
            let action = state.withLock { state -> LoadingTaskStateMachine.Action in
                guard case .awaitingChallenge = state.machine.state else { return .none }
                guard let authorization, let credential, let challenge else { return state.machine.challengeDecided(retry: false) }
                state.answers.answer(
                    authorization, from: ChallengeAnswers.Answered(credential: credential, space: challenge.protectionSpace),
                    isDigest: challenge.offer.scheme == "digest")
                return state.machine.challengeDecided(retry: true, needsBodyStream: state.request.needsBodyStream)
            }
            return perform(action)
        }
        cancel()
    }
}
