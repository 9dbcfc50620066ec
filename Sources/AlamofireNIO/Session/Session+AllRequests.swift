import AFSynchronization
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    // MARK: All requests

    /// Perform an action on all active `Request`s.
    ///
    /// - Note: The provided `action` closure is performed asynchronously, meaning that some `Request`s may complete and
    ///         be unavailable by time it runs. Additionally, this action is performed on the instances's `rootQueue`,
    ///         so care should be taken that actions are fast. Once the work on the `Request`s is complete, any
    ///         additional work should be performed on another queue.
    ///
    /// - Parameter action: Closure to perform with all `Request`s.
    @preconcurrency public func withAllRequests(perform action: @escaping @Sendable (Set<Request>) -> Void) {
        rootQueue.async { action(self.activeRequests.withLock { $0 }) }
    }

    /// Cancel all active `Request`s, optionally calling a completion handler when complete.
    ///
    /// - Note: This is an asynchronous operation and does not block the creation of future `Request`s. Cancelled
    ///         `Request`s may not cancel immediately due internal work, and may not cancel at all if they are close to
    ///         completion when cancelled.
    ///
    /// - Parameters:
    ///   - queue:      `DispatchQueue` on which the completion handler is run. `.main` by default.
    ///   - completion: Closure to be called when all `Request`s have been cancelled.
    @preconcurrency public func cancelAllRequests(completingOnQueue queue: DispatchQueue = .main, completion: (@Sendable () -> Void)? = nil)
    {
        withAllRequests { requests in
            requests.forEach { $0.cancel() }
            queue.async { completion?() }
        }
    }

    /// Closure which provides a `URLRequest` for mutation.
    public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

    /// Starts setting a new request up when the session sets requests up eagerly.
    func prepare<R: Request>(_ request: R) -> R {
        // A request that will not resume on its own is remembered, so that it finishes if the session
        // goes first; one that will is in `activeRequests` once set up, and finishes on its own before.
        if !(request.shouldAutomaticallyResume ?? startRequestsImmediately) { unfinishedRequests.add(request) }
        if requestSetup == .eager { request.setUpEagerly() }
        return request
    }
}
