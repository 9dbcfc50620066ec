import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A credential that authenticates requests, such as an OAuth2 access token with its refresh token.
public protocol AuthenticationCredential {
    /// Whether the credential must be refreshed before use: true once it has expired, and wisely a
    /// little before.
    var requiresRefresh: Bool { get }
}

/// Applies a ``AuthenticationCredential`` to requests and refreshes it, for an
/// ``AuthenticationInterceptor``.
public protocol Authenticator: AnyObject, Sendable {
    /// The credential this authenticator works with.
    associatedtype Credential: AuthenticationCredential & Sendable

    /// Authenticates `urlRequest` with `credential` (for OAuth2, a Bearer `Authorization` header).
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Makes a new credential from `credential` (for OAuth2, with its refresh token) and calls
    /// `completion` with it or the error. Called once for every request waiting on it.
    @preconcurrency func refresh(
        _ credential: Credential, for session: Session, completion: @escaping @Sendable (Result<Credential, any Error>) -> Void)

    /// Whether the request failed because the server rejected its credential (commonly a 401 from
    /// the authentication server itself). Return false when credentials cannot be revoked.
    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool

    /// Whether `urlRequest` carries `credential`. A request rejected with an older credential is simply
    /// retried with the current one, without another refresh. Return true when credentials cannot be
    /// revoked.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

/// Why an ``AuthenticationInterceptor`` could not authenticate a request; it reaches the request
/// inside ``AFError/requestAdaptationFailed(error:)`` or ``AFError/requestRetryFailed(retryError:originalError:)``.
public enum AuthenticationError: Error {
    /// There is no credential to authenticate with.
    case missingCredential
    /// The credential was refreshed more often than the ``AuthenticationInterceptor/RefreshWindow`` allows.
    case excessiveRefresh
}

/// Authenticates requests with an ``Authenticator``'s credential and refreshes it when it expires or
/// the server rejects it, once for all the requests that need it: requests arriving during a refresh
/// wait for it and are authenticated with the new credential; a request rejected with a stale
/// credential is retried, its whole adapter chain run again; when the refresh fails, every waiting
/// request fails with its error.
///
/// ```swift
/// let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: credential)
/// AF.request(url, interceptor: interceptor)
/// ```
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor, Sendable {
    /// The credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes may happen within how long before a refresh fails with
    /// ``AuthenticationError/excessiveRefresh``: a guard against endless refresh loops.
    public struct RefreshWindow: Sendable {
        /// How far back refreshes are counted, in seconds (30).
        public let interval: TimeInterval
        /// How many refreshes that interval may hold (5).
        public let maximumAttempts: Int

        /// Creates a refresh window.
        ///
        /// - Parameters:
        ///   - interval: how far back refreshes are counted, in seconds.
        ///   - maximumAttempts: how many refreshes that interval may hold.
        public init(interval: TimeInterval = 30.0, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// The credential requests are authenticated with. Setting it ends a failed refresh's verdict.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.setCredential(newValue) } }
    }

    let authenticator: AuthenticatorType
    /// Where refreshes start and waiting requests are resumed, off the interceptor's lock.
    let queue = DispatchQueue(label: "org.alamofire.authentication.inspector")
    private let state: Mutex<AuthenticationState<AuthenticatorType>>

    /// Creates an interceptor that authenticates requests with `authenticator` and `credential`.
    ///
    /// - Parameters:
    ///   - authenticator: applies and refreshes the credential.
    ///   - credential: the credential, if there is one yet.
    ///   - refreshWindow: the limit on refreshes; nil for none (not recommended).
    public init(authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow? = RefreshWindow()) {
        self.authenticator = authenticator
        self.state = Mutex(AuthenticationState(credential: credential, refreshWindow: refreshWindow))
    }

    // MARK: Adapt

    /// Applies the credential to `urlRequest`, refreshing it first when it needs a refresh (requests adapted meanwhile
    /// wait).
    ///
    /// Fails with ``AuthenticationError/missingCredential`` when there is no credential.
    @preconcurrency public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        let waiter = AuthenticationState<AuthenticatorType>.AdaptWaiter(urlRequest: urlRequest, session: session, completion: completion)
        switch state.withLock({ $0.adapt(waiter, now: ProcessInfo.processInfo.systemUptime) }) {
        case .apply(let credential):
            var authenticated = urlRequest
            authenticator.apply(credential, to: &authenticated)
            completion(.success(authenticated))
        case .fail(let error):
            completion(.failure(error))
        case .wait:
            break
        case .refresh(let credential, let session):
            startRefresh(credential, for: session)
        case .resume(let waiters):
            resume(waiters)
        }
    }

    // MARK: Retry

    /// Decides whether to retry a request the server rejected for its credential: at once when the credential has changed
    /// since it was sent, else once a refresh succeeds (failing with its error when it fails).
    ///
    /// Other failures are not retried.
    @preconcurrency public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        // Only a request the server answered, and rejected for its credential, is the interceptor's business.
        guard let urlRequest = request.request, let response = request.response,
            authenticator.didRequest(urlRequest, with: response, failDueToAuthenticationError: error)
        else { return completion(.doNotRetry) }
        guard let (credential, version) = state.withLock({ state in state.credential.map { ($0, state.credentialVersion) } }) else {
            return completion(.doNotRetryWithError(AuthenticationError.missingCredential))
        }
        // Sent with an older credential: the current one may well pass.
        guard authenticator.isRequest(urlRequest, authenticatedWith: credential) else { return completion(.retry) }
        switch state.withLock({ $0.retry(completion, credential: credential, version: version, now: ProcessInfo.processInfo.systemUptime) })
        {
        case .answer(let result):
            completion(result)
        case .wait:
            break
        case .refresh(let credential):
            startRefresh(credential, for: session)
        case .resume(let waiters):
            resume(waiters)
        }
    }

    // MARK: Refresh

    private func startRefresh(_ credential: Credential, for session: Session) {
        // On the queue: an authenticator that calls back at once must not find the caller mid-step.
        queue.async {
            self.authenticator.refresh(credential, for: session) { result in
                let waiters = self.state.withLock { $0.refreshEnded(result) }
                self.resume(waiters)
            }
        }
    }

    /// Resumes the requests that waited for a refresh, on the queue.
    private func resume(_ waiters: AuthenticationState<AuthenticatorType>.Waiters) {
        guard !waiters.isEmpty else { return }
        queue.async {
            switch waiters.outcome {
            case .success:
                // Adapted again from the start, now with the new credential.
                for waiter in waiters.adapting { self.adapt(waiter.urlRequest, for: waiter.session, completion: waiter.completion) }
                for completion in waiters.retrying { completion(.retry) }
            case .failure(let error):
                for waiter in waiters.adapting { waiter.completion(.failure(error)) }
                for completion in waiters.retrying { completion(.doNotRetryWithError(error)) }
            }
        }
    }
}

/// The rules of an ``AuthenticationInterceptor``: the credential and its version, whether a refresh
/// runs or failed, the refreshes in the window, and the requests waiting. Each step returns what the
/// interceptor does next, outside its lock.
struct AuthenticationState<AuthenticatorType: Authenticator>: Sendable {
    typealias Credential = AuthenticatorType.Credential

    struct AdaptWaiter: Sendable {
        let urlRequest: URLRequest
        let session: Session
        let completion: @Sendable (Result<URLRequest, any Error>) -> Void
    }

    /// Requests to resume when a refresh ends, with how it ended.
    struct Waiters: Sendable {
        var adapting: [AdaptWaiter] = []
        var retrying: [@Sendable (RetryResult) -> Void] = []
        var outcome: Result<Void, any Error> = .success(())
        var isEmpty: Bool { adapting.isEmpty && retrying.isEmpty }
    }

    enum Refresh: Sendable {
        case idle
        case refreshing
        /// The refresh of this credential version failed: requests rejected with it fail at once,
        /// until the credential changes or a new request is adapted.
        case failed(any Error)
    }

    enum AdaptStep {
        case apply(Credential)
        case fail(any Error)
        /// Waits for the refresh under way.
        case wait
        /// Waits, and starts the refresh.
        case refresh(Credential, Session)
        /// The refresh could not start (too many): fail the waiters.
        case resume(Waiters)
    }

    enum RetryStep {
        case answer(RetryResult)
        case wait
        case refresh(Credential)
        case resume(Waiters)
    }

    private(set) var credential: Credential?
    private(set) var credentialVersion = 0
    private(set) var refresh: Refresh = .idle
    private var refreshTimes: [TimeInterval] = []
    private let refreshWindow: AuthenticationInterceptor<AuthenticatorType>.RefreshWindow?
    private var waiters = Waiters()

    init(credential: Credential?, refreshWindow: AuthenticationInterceptor<AuthenticatorType>.RefreshWindow?) {
        self.credential = credential
        self.refreshWindow = refreshWindow
    }

    private var isRefreshing: Bool {
        if case .refreshing = refresh { true } else { false }
    }

    mutating func setCredential(_ newCredential: Credential?) {
        credential = newCredential
        credentialVersion += 1
        refresh = .idle
    }

    mutating func adapt(_ waiter: AdaptWaiter, now: TimeInterval) -> AdaptStep {
        // A request adapted after a failed refresh (a new one, or one retried for another reason)
        // starts over (Alamofire 5.12): if the server rejects it, its 401 may start a new refresh
        // instead of failing with the old refresh's error.
        if case .failed = refresh { refresh = .idle }
        // Requests wait only for a refresh started because the credential expired; one started by a
        // rejected request lets others go with the current credential (they are retried if rejected).
        if isRefreshing, !waiters.adapting.isEmpty {
            waiters.adapting.append(waiter)
            return .wait
        }
        guard let credential else { return .fail(AuthenticationError.missingCredential) }
        guard credential.requiresRefresh, !isRefreshing else { return .apply(credential) }
        waiters.adapting.append(waiter)
        return startRefresh(now: now).map { .resume($0) } ?? .refresh(credential, waiter.session)
    }

    mutating func retry(
        _ completion: @escaping @Sendable (RetryResult) -> Void, credential current: Credential, version: Int, now: TimeInterval
    ) -> RetryStep {
        // The credential changed since the caller looked: the new one may pass.
        guard version == credentialVersion else { return .answer(.retry) }
        switch refresh {
        case .failed(let error):
            return .answer(.doNotRetryWithError(error))
        case .refreshing:
            waiters.retrying.append(completion)
            return .wait
        case .idle:
            waiters.retrying.append(completion)
            return startRefresh(now: now).map { .resume($0) } ?? .refresh(current)
        }
    }

    /// Starts a refresh unless the window forbids it; then returns the waiters to fail.
    private mutating func startRefresh(now: TimeInterval) -> Waiters? {
        if let refreshWindow {
            let recent = refreshTimes.filter { $0 >= now - refreshWindow.interval }.count
            if recent >= refreshWindow.maximumAttempts { return refreshEnded(.failure(AuthenticationError.excessiveRefresh)) }
        }
        refreshTimes.append(now)
        refresh = .refreshing
        return nil
    }

    /// The refresh ended: a new credential, or the error every waiting request fails with.
    mutating func refreshEnded(_ result: Result<Credential, any Error>) -> Waiters {
        var done = waiters
        waiters = Waiters()
        switch result {
        case .success(let newCredential):
            setCredential(newCredential)
            done.outcome = .success(())
        case .failure(let error):
            refresh = .failed(error)
            done.outcome = .failure(error)
        }
        return done
    }
}
