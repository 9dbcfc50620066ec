import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// How a request is set up, attempt after attempt: the `URLRequest` is built from the request's
/// convertible and checked, adapted by the session's interceptor then the request's, the kind's
/// task inputs are made (an upload's body), and the loading task is created. Each step tells the
/// request, which tells the monitors. Retries come back here after their delay.
extension Session: RequestDelegate {
    /// The configuration the requests' tasks use.
    public var sessionConfiguration: URLSessionConfiguration { configuration }

    /// Whether a request resumes when its first response handler is added.
    public var startImmediately: Bool { startRequestsImmediately }

    /// Sets `request` up on the root queue: called by its first `resume()` (or at creation, with `.eager` request
    /// setup). So set-up always runs after the statement that made the request, with every handler and modifier it
    /// chained, and never on the caller's thread.
    public func readyToPerform(request: Request) {
        rootQueue.async { self.perform(request) }
    }

    /// Forgets a request whose serializers have all run.
    public func cleanup(after request: Request) {
        _ = activeRequests.withLock { $0.remove(request) }
        unfinishedRequests.remove(request)
    }

    /// Asks the retriers (the session's, then the request's) whether `request` should be retried after `error`, and
    /// calls `completion` on the root queue. A retrier's own error becomes `.requestRetryFailed`.
    @preconcurrency public func retryResult(
        for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = retrier(for: request), request.mayBeRetried else {
            return rootQueue.async { completion(.doNotRetry) }
        }
        retrier.retry(request, for: self, dueTo: error) { result in
            self.rootQueue.async {
                guard let retryError = result.error else { return completion(result) }
                completion(.doNotRetryWithError(AFError.requestRetryFailed(retryError: retryError, originalError: error)))
            }
        }
    }

    /// Sets `request` up again after `timeDelay`, unless it was cancelled meanwhile.
    public func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?) {
        let retry: @Sendable () -> Void = {
            guard request.retryDelayElapsed() else { return }
            self.perform(request)
        }
        if let timeDelay, timeDelay > 0 {
            delayScheduler.schedule(after: timeDelay, on: rootQueue, DispatchWorkItem(block: retry))
        } else {
            rootQueue.async(execute: retry)
        }
    }

    // MARK: Setting a request up

    /// Builds, checks and adapts the request's `URLRequest` (called on the root queue): at once, or on the request
    /// queue when the session was given one.
    func perform(_ request: Request) {
        guard !request.isCancelled else { return }
        _ = activeRequests.withLock { $0.insert(request) }
        // A cancel may have finished the request (and its clean-up may have run) since the check.
        if request.hasBegunFinishing {
            _ = activeRequests.withLock { $0.remove(request) }
            return
        }
        if setsUpOnRootQueue {
            performSetupOperations(for: request)
        } else {
            requestQueue.async { self.performSetupOperations(for: request) }
        }
    }

    private func performSetupOperations(for request: Request) {
        if let download = request as? DownloadRequest, case .resumeData = download.downloadable {
            // As with Alamofire, a download made from resume data builds and adapts no `URLRequest`.
            return rootQueue.async { download.performResumingSetup() }
        }
        let initialRequest: URLRequest
        do {
            initialRequest = try request.makeInitialURLRequest()
            try initialRequest.validate()
        } catch {
            return request.didFailToCreateURLRequest(with: error.asAFError(or: .createURLRequestFailed(error: error)))
        }
        request.didCreateInitialURLRequest(initialRequest)
        guard !request.isCancelled else { return }
        guard let adapter = adapter(for: request) else {
            return didCreateURLRequest(initialRequest, for: request)
        }
        adapter.adapt(initialRequest, using: RequestAdapterState(requestID: request.id, session: self)) { result in
            do {
                let adaptedRequest = try result.get()
                try adaptedRequest.validate()
                request.didAdaptInitialRequest(initialRequest, to: adaptedRequest)
                self.didCreateURLRequest(adaptedRequest, for: request)
            } catch {
                request.didFailToAdaptURLRequest(initialRequest, withError: .requestAdaptationFailed(error: error))
            }
        }
    }

    private func didCreateURLRequest(_ urlRequest: URLRequest, for request: Request) {
        guard !request.isCancelled else { return }
        if let failure = request.prepareTask() { return request.retryOrFinish(creationFailure: failure) }
        request.didCreateURLRequest(urlRequest)
        guard !request.isCancelled else { return }
        request.createTask(for: urlRequest)
    }

    // MARK: Interceptors

    /// The session's interceptor then the request's, as adapters.
    func adapter(for request: Request) -> (any RequestAdapter)? {
        switch (interceptor, request.interceptor) {
        case (nil, nil): nil
        case (let one?, nil), (nil, let one?): one
        case (let session?, let own?): Interceptor(adapters: [session, own])
        }
    }

    /// The session's interceptor then the request's, as retriers.
    func retrier(for request: Request) -> (any RequestRetrier)? {
        switch (interceptor, request.interceptor) {
        case (nil, nil): nil
        case (let one?, nil), (nil, let one?): one
        case (let session?, let own?): Interceptor(retriers: [session, own])
        }
    }
}
