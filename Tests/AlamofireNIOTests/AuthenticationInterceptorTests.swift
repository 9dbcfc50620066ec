import AFSynchronization
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AuthenticationInterceptor against `/bearer` (401 without a token): single-flight refreshes, for an
/// expired credential and for one the server rejects, and their failures.
@Suite struct AuthenticationInterceptorTests {
    struct Token: AuthenticationCredential, Sendable {
        /// Empty for a revoked token: the server then answers 401.
        let value: String
        var expired = false
        var requiresRefresh: Bool { expired }
    }

    struct RefreshFailed: Error, Equatable {}

    /// Counts requests an interceptor has taken in, and runs what waits for a number of them.
    final class Arrivals: Sendable {
        private let state = Mutex<(count: Int, waiting: [(count: Int, run: @Sendable () -> Void)])>((0, []))

        func arrive() {
            let ready = state.withLock { state in
                state.count += 1
                let count = state.count
                let ready = state.waiting.filter { $0.count <= count }
                state.waiting.removeAll { $0.count <= count }
                return ready
            }
            for waiter in ready { waiter.run() }
        }

        /// Runs `body` once `count` requests have arrived.
        func when(_ count: Int, _ body: @escaping @Sendable () -> Void) {
            let now = state.withLock { state in
                if state.count >= count { return true }
                state.waiting.append((count, body))
                return false
            }
            if now { body() }
        }
    }

    /// Forwards to an `AuthenticationInterceptor` and counts each adapt and retry once the interceptor
    /// has taken it in (applied it, queued it, or answered it).
    struct CountingInterceptor<Wrapped: RequestInterceptor>: RequestInterceptor {
        let wrapped: Wrapped
        let adapted = Arrivals()
        let retried = Arrivals()

        func adapt(
            _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
        ) {
            wrapped.adapt(urlRequest, for: session, completion: completion)
            adapted.arrive()
        }

        func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void)
        {
            wrapped.retry(request, for: session, dueTo: error, completion: completion)
            retried.arrive()
        }
    }

    final class TokenAuthenticator: Authenticator {
        private let refreshCount = Mutex(0)
        /// What the n-th refresh (from 1) gives.
        let refreshResult: @Sendable (Int) -> Result<Token, any Error>
        /// When set, a refresh ends only once this many requests have arrived, instead of after a pause.
        private let holdRefresh = Mutex<(arrivals: Arrivals, count: Int)?>(nil)

        init(refreshResult: @escaping @Sendable (Int) -> Result<Token, any Error> = { .success(Token(value: "fresh-\($0)")) }) {
            self.refreshResult = refreshResult
        }

        /// Makes refreshes end only once `count` requests have arrived at `arrivals`.
        func holdRefreshes(until count: Int, arrive arrivals: Arrivals) {
            holdRefresh.withLock { $0 = (arrivals, count) }
        }

        var refreshes: Int { refreshCount.withLock { $0 } }

        func apply(_ credential: Token, to urlRequest: inout URLRequest) {
            urlRequest.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: Token, for session: Session, completion: @escaping @Sendable (Result<Token, any Error>) -> Void) {
            let count = refreshCount.withLock { count in
                count += 1
                return count
            }
            if let (arrivals, waitFor) = holdRefresh.withLock({ $0 }) {
                arrivals.when(waitFor) { completion(self.refreshResult(count)) }
                return
            }
            // A refresh takes a while, as a round trip to an authorization server does.
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { completion(self.refreshResult(count)) }
        }

        func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Token) -> Bool {
            urlRequest.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }
    }

    struct BearerEcho: Decodable, Sendable {
        let authenticated: Bool
        let token: String
    }

    /// Runs `count` requests to `/bearer` at once and returns their responses.
    static func concurrentRequests(
        _ count: Int, to server: HTTPBinServer, interceptor: some RequestInterceptor
    ) async -> [DataResponse<BearerEcho, AFError>] {
        let session = Session()
        return await withTaskGroup(of: DataResponse<BearerEcho, AFError>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await session.request(server.url("/bearer"), interceptor: interceptor).validate().serializingDecodable(BearerEcho.self)
                        .response
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func aValidCredentialIsAppliedWithoutARefresh() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let authenticator = TokenAuthenticator()
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "abc"))
            let responses = await Self.concurrentRequests(3, to: server, interceptor: interceptor)
            #expect(responses.map { $0.value?.token } == ["abc", "abc", "abc"])
            #expect(authenticator.refreshes == 0)
        }
    }

    @Test func aMissingCredentialFailsAdaptation() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let interceptor = AuthenticationInterceptor(authenticator: TokenAuthenticator())
            let response = await Self.concurrentRequests(1, to: server, interceptor: interceptor)[0]
            guard case .requestAdaptationFailed(let error)? = response.error else {
                Issue.record("\(String(describing: response.error))")
                return
            }
            guard case .missingCredential = error as? AuthenticationError else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func fiftyRequestsWithAnExpiredCredentialShareOneRefresh() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let authenticator = TokenAuthenticator()
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "old", expired: true))
            let responses = await Self.concurrentRequests(50, to: server, interceptor: interceptor)
            #expect(authenticator.refreshes == 1)
            #expect(responses.allSatisfy { $0.value?.token == "fresh-1" })
            #expect(interceptor.credential?.value == "fresh-1")
        }
    }

    @Test func fiftyRequestsRejectedForTheirCredentialShareOneRefreshAndAreRetried() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let authenticator = TokenAuthenticator()
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: ""))
            let responses = await Self.concurrentRequests(50, to: server, interceptor: interceptor)
            #expect(authenticator.refreshes == 1)
            #expect(responses.allSatisfy { $0.value?.token == "fresh-1" })
        }
    }

    /// The refresh fails only once all ten requests are waiting for it: one that came later would start
    /// over (Alamofire 5.12) and could refresh again.
    @Test func aFailedRefreshFailsEveryWaitingRequestWithItsError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let authenticator = TokenAuthenticator { _ in .failure(RefreshFailed()) }
            let expired = CountingInterceptor(
                wrapped: AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "old", expired: true)))
            authenticator.holdRefreshes(until: 10, arrive: expired.adapted)
            // Bounded: a refresh held for requests that never arrive would otherwise hang the test.
            let adapting = try await withTimeout { await Self.concurrentRequests(10, to: server, interceptor: expired) }
            for response in adapting {
                guard case .requestAdaptationFailed(let error)? = response.error, error is RefreshFailed else {
                    Issue.record("\(String(describing: response.error))")
                    return
                }
            }
            #expect(authenticator.refreshes == 1)

            let revoked = CountingInterceptor(
                wrapped: AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "")))
            authenticator.holdRefreshes(until: 10, arrive: revoked.retried)
            let retrying = try await withTimeout { await Self.concurrentRequests(10, to: server, interceptor: revoked) }
            for response in retrying {
                guard case .requestRetryFailed(let error, _)? = response.error, error is RefreshFailed else {
                    Issue.record("\(String(describing: response.error))")
                    return
                }
            }
            #expect(authenticator.refreshes == 2)
        }
    }

    /// Alamofire 5.12: after a failed refresh, a new request starts over, so its 401 refreshes again.
    @Test func aNewRequestAfterAFailedRefreshMayRefreshAgain() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let authenticator = TokenAuthenticator { count in
                count == 1 ? .failure(RefreshFailed()) : .success(Token(value: "fresh-\(count)"))
            }
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: ""))
            let failed = await Self.concurrentRequests(1, to: server, interceptor: interceptor)[0]
            guard case .requestRetryFailed(let error, _)? = failed.error, error is RefreshFailed else {
                Issue.record("\(String(describing: failed.error))")
                return
            }
            let later = await Self.concurrentRequests(1, to: server, interceptor: interceptor)[0]
            #expect(later.value?.token == "fresh-2")
            #expect(authenticator.refreshes == 2)
        }
    }

    @Test func refreshingMoreOftenThanTheWindowAllowsFails() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // Every refresh gives a credential that has already expired.
            let authenticator = TokenAuthenticator { .success(Token(value: "short-\($0)", expired: true)) }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator, credential: Token(value: "old", expired: true),
                refreshWindow: .init(interval: 30, maximumAttempts: 1))
            // The first refresh is allowed; re-adapting with its expired result would need a second.
            for _ in 0..<2 {
                let response = await Self.concurrentRequests(1, to: server, interceptor: interceptor)[0]
                guard case .requestAdaptationFailed(let error)? = response.error, case .excessiveRefresh = error as? AuthenticationError
                else {
                    Issue.record("\(String(describing: response.error))")
                    return
                }
            }
            #expect(authenticator.refreshes == 1)
        }
    }

    // MARK: The rules, as a plain value

    typealias State = AuthenticationState<TokenAuthenticator>

    static func waiter() -> State.AdaptWaiter {
        State.AdaptWaiter(urlRequest: URLRequest(url: URL(string: "http://127.0.0.1:1/")!), session: Session(), completion: { _ in })
    }

    @Test func anExpiredCredentialStartsOneRefreshAndLaterAdaptsWait() {
        var state = State(credential: Token(value: "old", expired: true), refreshWindow: .init())
        guard case .refresh(let credential, _) = state.adapt(Self.waiter(), now: 0) else {
            Issue.record("refresh")
            return
        }
        #expect(credential.value == "old")
        guard case .wait = state.adapt(Self.waiter(), now: 0) else {
            Issue.record("wait")
            return
        }
        let waiters = state.refreshEnded(.success(Token(value: "new")))
        #expect(waiters.adapting.count == 2)
        #expect(state.credentialVersion == 1)
        guard case .apply(let fresh) = state.adapt(Self.waiter(), now: 1) else {
            Issue.record("apply")
            return
        }
        #expect(fresh.value == "new")
    }

    @Test func retryAnswersFollowTheCredentialVersionAndTheRefresh() {
        var state = State(credential: Token(value: "a"), refreshWindow: nil)
        guard case .answer(.retry) = state.retry({ _ in }, credential: Token(value: "a"), version: 7, now: 0) else {
            Issue.record("a stale version is retried")
            return
        }
        guard case .refresh = state.retry({ _ in }, credential: Token(value: "a"), version: 0, now: 0) else {
            Issue.record("refresh")
            return
        }
        guard case .wait = state.retry({ _ in }, credential: Token(value: "a"), version: 0, now: 0) else {
            Issue.record("wait")
            return
        }
        let waiters = state.refreshEnded(.failure(RefreshFailed()))
        #expect(waiters.retrying.count == 2)
        guard case .answer(.doNotRetryWithError(let error)) = state.retry({ _ in }, credential: Token(value: "a"), version: 0, now: 0),
            error is RefreshFailed
        else {
            Issue.record("a failed refresh fails later rejections at once")
            return
        }
        // A request adapted after the failure starts over: its rejection may refresh again.
        guard case .apply = state.adapt(Self.waiter(), now: 0),
            case .refresh = state.retry({ _ in }, credential: Token(value: "a"), version: 0, now: 0)
        else {
            Issue.record("a new request after a failed refresh may refresh again")
            return
        }
        _ = state.refreshEnded(.failure(RefreshFailed()))
        state.setCredential(Token(value: "b"))
        guard case .refresh = state.retry({ _ in }, credential: Token(value: "b"), version: 1, now: 0) else {
            Issue.record("a new credential may be refreshed again")
            return
        }
    }

    @Test func theRefreshWindowCountsOnlyRecentRefreshes() {
        var state = State(credential: Token(value: "a", expired: true), refreshWindow: .init(interval: 10, maximumAttempts: 1))
        guard case .refresh = state.adapt(Self.waiter(), now: 100) else {
            Issue.record("first refresh")
            return
        }
        _ = state.refreshEnded(.success(Token(value: "b", expired: true)))
        guard case .resume(let failed) = state.adapt(Self.waiter(), now: 105), case .failure(let error) = failed.outcome,
            case .excessiveRefresh = error as? AuthenticationError
        else {
            Issue.record("too soon")
            return
        }
        state.setCredential(Token(value: "c", expired: true))
        guard case .refresh = state.adapt(Self.waiter(), now: 111) else {
            Issue.record("the window has passed")
            return
        }
    }
}
