import AFCollections
import AFSynchronization
import AlamofireNIOLoading
import Foundation
import Logging
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Control

extension Request {
    /// Cancels the instance. Once cancelled, a `Request` can no longer be resumed or suspended.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func cancel() -> Self {
        cancel(deciding: { $0.cancel() }, stopping: { self.cancelLoadingTask($0) })
        return self
    }

    /// Cancels as the machine decides (a `cancel()`, or a WebSocket's close): the monitors hear of
    /// it first, then of the task's cancel as `stop` stops it, or the request finishes at once.
    func cancel(
        deciding decide: (inout RequestStateMachine<LoadingTask>) -> RequestStateMachine<LoadingTask>.CancelAction,
        stopping stop: @escaping @Sendable (LoadingTask) -> Void
    ) {
        decideThenPerform { state in
            let action = decide(&state.machine)
            if case .none = action { return nil }
            return {
                // Told first, so monitors hear of the cancel before the events it causes.
                self.monitor(posting: Request.didCancelNotification)?.requestDidCancel(self)
                switch action {
                case .none, .notify:
                    break
                case .cancelTask(let task):
                    self.tellTaskEvent(.requestDidCancelTask, Request.didCancelTaskNotification) {
                        $0.request(self, didCancelTask: self.sessionTask(for: task))
                    }
                    stop(task)
                case .finish:
                    self.underlyingQueue.async { self.finish() }
                }
            }
        }
    }

    /// The session went away: the request finishes with `.sessionDeinitialized` unless it is
    /// finishing already (a running task is cancelled first), as Alamofire's requests do.
    func sessionDeinitialized() {
        decideThenPerform { state in
            switch state.machine.sessionDeinitialized() {
            case .none, .notify: nil
            case .cancelTask(let task): { self.cancelLoadingTask(task) }
            case .finish: { self.underlyingQueue.async { self.finish() } }
            }
        }
    }

    /// Suspends the instance.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func suspend() -> Self {
        decideThenPerform { state in
            guard let task = state.machine.suspend() else { return nil }
            return {
                self.monitor(posting: Request.didSuspendNotification)?.requestDidSuspend(self)
                if let task { self.suspendTask(task) }
            }
        }
        return self
    }

    /// Resumes the instance.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func resume() -> Self {
        announceStart()
        resume(onRootQueue: false)
        return self
    }

    /// The resume a response handler asks for, made on the request's queue after the statement that added it.
    func resumeAutomatically() {
        announceStart()
        underlyingQueue.async { self.resume(onRootQueue: self.underlyingQueue === self.session?.rootQueue) }
    }

    /// Tells the request's ``RequestLifetimeMonitor``s, once and on this thread (the caller's, where
    /// its task-local values are), that the request starts; not when it has been cancelled or finished.
    func announceStart() {
        guard hasLifetimeMonitors.load(ordering: .relaxed) else { return }
        let lifetimeMonitors = mutableState.withLock { state -> CompositeEventMonitor? in
            guard !state.startAnnounced, let monitors = state.eventMonitor, monitors.hasLifetimeMonitors,
                state.machine.state != .cancelled, state.machine.state != .finished
            else { return nil }
            state.startAnnounced = true
            return monitors
        }
        lifetimeMonitors?.requestWillStart(self)
    }

    /// Resumes; `onRootQueue` says the caller runs on the session's root queue, where set-up may start at once
    /// instead of after one more hop to it.
    private func resume(onRootQueue: Bool) {
        // Another thread may perform the work (one already performing this request's outbox).
        let callingThread = pthread_self()
        decideThenPerform { state in
            guard let action = state.machine.resume() else { return nil }
            return {
                self.monitor(posting: Request.didResumeNotification)?.requestDidResume(self)
                if let task = action.task { self.resumeTask(task) }
                guard action.setUp else { return }
                guard let session = self.session else { return self.sessionDeinitialized() }
                if onRootQueue, pthread_equal(pthread_self(), callingThread) != 0 {
                    session.perform(self)
                } else {
                    session.readyToPerform(request: self)
                }
            }
        }
    }

    /// Tells the monitors, then starts the task (so its events follow the resume's).
    private func resumeTask(_ task: LoadingTask) {
        tellTaskEvent(.requestDidResumeTask, Request.didResumeTaskNotification) {
            $0.request(self, didResumeTask: self.sessionTask(for: task))
        }
        if !task.isStarted { willStartLoadingTask(task) }
        task.resume()
    }

    private func suspendTask(_ task: LoadingTask) {
        tellTaskEvent(.requestDidSuspendTask, Request.didSuspendTaskNotification) {
            $0.request(self, didSuspendTask: self.sessionTask(for: task))
        }
        task.suspend()
    }

    /// Tells the monitors of an event of the request's task; ``AlamofireNotifications`` posts `notification`.
    func tellTaskEvent(_ kind: MonitorEvent, _ notification: Notification.Name, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        monitor(posting: notification)?.performEvent(kind, posting: notification, for: self, event)
    }

    /// Sets the request up now when the session sets requests up eagerly.
    func setUpEagerly() {
        announceStart()
        guard mutableState.withLock({ $0.machine.setUp() }) else { return }
        guard let session else { return sessionDeinitialized() }
        session.readyToPerform(request: self)
    }
}

// MARK: Lifecycle, driven by the Session

extension Request {
    func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(urlRequest) }
        monitor()?.request(self, didCreateInitialURLRequest: urlRequest)
    }

    func didFailToCreateURLRequest(with error: AFError) {
        monitor()?.request(self, didFailToCreateURLRequestWithError: error)
        callCURLHandler()
        retryOrFinish(creationFailure: error)
    }

    func didAdaptInitialRequest(_ initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(adaptedRequest) }
        monitor()?.request(self, didAdaptInitialRequest: initialRequest, to: adaptedRequest)
    }

    func didFailToAdaptURLRequest(_ request: URLRequest, withError error: AFError) {
        monitor()?.request(self, didFailToAdaptURLRequest: request, withError: error)
        callCURLHandler()
        retryOrFinish(creationFailure: error)
    }

    /// The final `URLRequest` exists: tell whoever waits for one.
    func didCreateURLRequest(_ urlRequest: URLRequest) {
        if let handler = mutableState.withLock({ $0.urlRequestHandler }) { handler.queue.async { handler.handler(urlRequest) } }
        monitor()?.request(self, didCreateURLRequest: urlRequest)
        callCURLHandler()
    }

    /// Makes the loading task for `urlRequest`; it starts, waits suspended or waits for a resume,
    /// as the request's state says.
    func createTask(for urlRequest: URLRequest) {
        guard let session else { return sessionDeinitialized() }
        let task = session.loading.makeTask(
            with: urlRequest, body: loadingBody(), destination: loadingDestination(), resuming: loadingResumption(for: urlRequest),
            delegate: session.delegate, owner: self, clientIdentity: clientIdentity?.identity, logger: transportLogger)
        decideThenPerform { state in
            let action = state.machine.taskCreated(task)
            guard action != .discard else { return { task.discardUnstarted() } }
            state.tasks.append(task)
            let taskHandler = state.urlSessionTaskHandler
            return {
                self.log(.trace, "sending", ["http.request.resend_count": "\(self.retryCount)"])
                if let taskHandler {
                    let sessionTask = self.sessionTask(for: task)
                    taskHandler.queue.async { taskHandler.handler(sessionTask) }
                }
                self.monitor()?.performEvent(.requestDidCreateTask) { $0.request(self, didCreateTask: self.sessionTask(for: task)) }
                switch action {
                case .resume:
                    self.resumeTask(task)
                case .suspend:
                    self.tellTaskEvent(.requestDidSuspendTask, Request.didSuspendTaskNotification) {
                        $0.request(self, didSuspendTask: self.sessionTask(for: task))
                    }
                case .none, .discard:
                    break
                }
            }
        }
    }

    func didGatherMetrics(_ metrics: TaskMetrics) {
        mutableState.withLock { $0.allMetrics.append(metrics) }
        monitor()?.request(self, didGatherMetrics: metrics)
    }

    /// The task completed: on the request's queue, validate, then retry or finish.
    func didCompleteTask(_ task: LoadingTask, with failure: URLError?) {
        if failure == nil { completeUnknownDownloadProgress() }
        if failure?.code == .httpTooManyRedirects, let last = task.snapshot.receivedResponse, last.isHTTP {
            // As with URLSession, the response is then the last redirect (never offered to a handler).
            mutableState.withLock { $0.response = $0.response ?? last }
        }
        underlyingQueue.async { self.didCompleteLoad(of: task, failure) }
    }

    private func didCompleteLoad(of task: LoadingTask, _ failure: URLError?) {
        // A server trust evaluator's own error is the request's, as Alamofire reports it.
        let taskError = failure.map { $0.serverTrustFailure ?? AFError.sessionTaskFailed(error: $0) }
        let error = mutableState.withLock { $0.machine.loadCompleted(error: taskError) }
        if error == nil {
            // Validators may record an error.
            mutableState.withLock { $0.validators }.forEach { $0() }
        } else {
            didAbandonLoad()
        }
        tellTaskEvent(.requestDidCompleteTask, Request.didCompleteTaskNotification) {
            $0.request(self, didCompleteTask: self.sessionTask(for: task), with: taskError)
        }
        retryOrFinish()
    }

    /// Asks the retriers when the request failed with an error worth retrying, else finishes.
    func retryOrFinish(creationFailure: AFError? = nil) {
        switch mutableState.withLock({ $0.machine.retryOrFinish(creationFailure: creationFailure) }) {
        case .none:
            break
        case .finish:
            finish()
        case .askRetrier(let error):
            guard let session else { return sessionDeinitialized() }
            session.retryResult(for: self, dueTo: error) { result in self.didDecideRetry(result) }
        }
    }

    private func didDecideRetry(_ result: RetryResult) {
        switch mutableState.withLock({ $0.machine.retryDecided(result) }) {
        case .none:
            break
        case .finish:
            finish()
        case .retry(let delay):
            guard let session else { return sessionDeinitialized() }
            log(.debug, "retrying", ["error.type": "\(telemetryErrorType ?? "")", "retry.delay_s": "\(delay)"])
            session.retryRequest(self, withDelay: delay)
        }
    }

    /// The retry delay has passed: whether the session should set the request up again. If so, the
    /// last attempt is cleared and the monitors hear that the request is retrying.
    func retryDelayElapsed() -> Bool {
        guard mutableState.withLock({ $0.machine.retryDelayElapsed() }) else { return false }
        prepareForRetry()
        monitor()?.requestIsRetrying(self)
        return true
    }

    /// Records a validator's failure; a cancellation or earlier failure wins.
    func recordFailure(_ failure: AFError) {
        mutableState.withLock { $0.machine.recordFailure(failure) }
    }

    /// Ends the attempt: runs the response serializers and tells the monitors.
    func finish() {
        // The validators stay: a serializer's failure may still retry the request, and the next
        // attempt is validated too. They go with the request.
        guard mutableState.withLock({ $0.machine.finish() }) else { return }
        log(.trace, "finished", finishMetadata())
        // Told before the serializers run, whatever queue they run on.
        monitor(posting: Request.didFinishNotification)?.requestDidFinish(self)
        processNextResponseSerializer()
    }

    /// Runs `handler` once the request's serializers have all run and it has cleaned up after them
    /// (an upload's file removed, a download's moved), at once if it has, however it ended,
    /// cancelled included.
    package func onFinish(perform handler: @escaping @Sendable () -> Void) {
        let finished = mutableState.withLock { state in
            // The completions run before the clean-up: between the two the handler waits for it.
            if state.machine.isProcessingFinished, state.isCleanedUp { return true }
            state.finishHandlers.append(handler)
            return false
        }
        if finished { handler() }
    }
}
