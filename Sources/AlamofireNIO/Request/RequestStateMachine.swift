import AFCollections
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules of a ``Request``'s life, as a value: the public ``Request/State``, where the request is
/// in its pipeline (``Phase``), its error, its retry count and its response serializers. Each event
/// returns what the request must do next; the request does it after releasing its lock. Generic
/// over the loading task so that tests drive it with a stand-in.
///
/// ```
/// notStarted ─setUp─▶ creatingRequest ─task made─▶ loading ─completed─▶ validating
///   (lazy: the first resume sets up)  ▲   └─failed─▶ awaitingRetryDecision     │
///                                     └─ waitingToRetry ◀─retry─ awaitingRetryDecision ◀─failed─┤
///                                              ▲                     └─don't retry─▶ finishing ◀─┘
///                                              └──── a serializer asked to retry ────────┘
/// finishing ─serializers done─▶ finished ─serializer added─▶ finishing
/// ```
/// The task is made as soon as the `URLRequest` exists and follows the request's state: resumed,
/// suspended or left waiting for a resume. A cancel stops the task (whose completion then finishes
/// the request) or, when no task runs, finishes the request at once; events that arrive for the
/// abandoned pipeline after that (a task made, a retrier's answer, a retry delay) are ignored. The
/// first error stays: a validation or retry answer never overwrites the cancellation.
struct RequestStateMachine<Task: AnyObject & Sendable> {
    typealias Work = @Sendable () -> Void

    /// A serializer or a completion in its list. Wrapped, the closure is stored as it is; a bare
    /// closure in a generic list is converted on the way in and on the way out, an allocation each.
    struct ListedWork {
        let run: Work
    }

    enum Phase {
        /// Nothing has happened yet: a lazily set-up request waits for its first resume.
        case notStarted
        /// The `URLRequest` is being built and adapted (and, for uploads, the body made).
        case creatingRequest
        case loading(Task)
        case validating
        case awaitingRetryDecision
        case waitingToRetry
        case finishing
        case finished
    }

    private(set) var state: Request.State = .initialized
    private(set) var phase: Phase = .notStarted
    private(set) var error: AFError?
    private(set) var retryCount = 0
    /// Whether a WebSocket request was closed (see ``close()``).
    private(set) var isClosed = false
    private var serializers: InlineFirstList<ListedWork> = []
    private var completions: InlineFirstList<ListedWork> = []

    var isCancelled: Bool { state == .cancelled }

    /// The task of the load under way, if one runs.
    var runningTask: Task? {
        if case .loading(let task) = phase { task } else { nil }
    }

    // MARK: Control

    /// Starts setting up (eager requests, at creation): whether this call did.
    mutating func setUp() -> Bool {
        guard case .notStarted = phase, !isCancelled else { return false }
        phase = .creatingRequest
        return true
    }

    struct ResumeAction {
        /// The request's set-up starts now (a lazy request's first resume).
        var setUp = false
        /// The running task to resume.
        var task: Task?
    }

    /// Resumes the request: nil when it cannot be (already resumed, cancelled or finished), else
    /// what to start; the monitors are told in both other cases.
    mutating func resume() -> ResumeAction? {
        guard state.canTransitionTo(.resumed) else { return nil }
        state = .resumed
        var action = ResumeAction(task: runningTask)
        if case .notStarted = phase {
            phase = .creatingRequest
            action.setUp = true
        }
        return action
    }

    /// Suspends the request: nil when it cannot be, else the running task to suspend, if any.
    mutating func suspend() -> Task?? {
        guard state.canTransitionTo(.suspended) else { return nil }
        state = .suspended
        return .some(runningTask)
    }

    enum CancelAction {
        case none
        /// Tell the monitors, then cancel the task; its completion finishes the request.
        case cancelTask(Task)
        /// Tell the monitors, then finish: nothing is running that would.
        case finish
        /// Tell the monitors; the request is already finishing.
        case notify
    }

    mutating func cancel() -> CancelAction {
        cancel(recordingError: true)
    }

    /// A WebSocket request's `close(sending:reason:)`: cancelled like `cancel()`, but without an
    /// error, as Alamofire's `didClose` leaves none; the cancellation the closing task reports is
    /// not recorded either (see ``loadCompleted(error:)``).
    mutating func close() -> CancelAction {
        cancel(recordingError: false)
    }

    private mutating func cancel(recordingError: Bool) -> CancelAction {
        guard state.canTransitionTo(.cancelled) else { return .none }
        state = .cancelled
        if recordingError {
            if error == nil { error = .explicitlyCancelled }
        } else {
            isClosed = true
        }
        switch phase {
        case .loading(let task):
            return .cancelTask(task)
        case .finishing, .finished:
            return .notify
        case .notStarted, .creatingRequest, .validating, .awaitingRetryDecision, .waitingToRetry:
            return .finish
        }
    }

    /// The session that made the request went away (Alamofire's `finishRequestsForDeinit`): unless
    /// it is finishing already, the request finishes with `.sessionDeinitialized`, its state left as
    /// it is; a running task is cancelled and its completion finishes it, with no retry.
    mutating func sessionDeinitialized() -> CancelAction {
        if isFinishing { return .none }
        error = .sessionDeinitialized
        switch phase {
        case .loading(let task): return .cancelTask(task)
        case .finishing, .finished: return .none
        case .notStarted, .creatingRequest, .validating, .awaitingRetryDecision, .waitingToRetry: return .finish
        }
    }

    /// A response handler answered `.cancel`: the request is cancelled (the loading task stops on
    /// its own), without a `cancel()` call and so without its events, as in Alamofire.
    mutating func responseDispositionCancelled() {
        guard state.canTransitionTo(.cancelled) else { return }
        state = .cancelled
        if error == nil { error = .explicitlyCancelled }
    }

    // MARK: Pipeline

    enum TaskAction: Equatable {
        /// The request was cancelled or moved on while the task was made: drop it, unstarted.
        case discard
        /// The request waits for a resume: leave the task unstarted.
        case none
        case resume
        case suspend
    }

    /// The `URLRequest` is ready and its task made: what the task must do for the request's state.
    mutating func taskCreated(_ task: Task) -> TaskAction {
        guard case .creatingRequest = phase, !isCancelled else { return .discard }
        phase = .loading(task)
        switch state {
        case .resumed: return .resume
        case .suspended: return .suspend
        case .initialized, .cancelled, .finished: return .none
        }
    }

    /// The loading task completed; returns the request's error (the load's, unless one came first).
    mutating func loadCompleted(error loadError: AFError?) -> AFError? {
        if case .loading = phase { phase = .validating }
        if isClosed, case .sessionTaskFailed(let failure as URLError) = loadError, failure.code == .cancelled { return error }
        if error == nil { error = loadError }
        return error
    }

    /// A failure found after loading (a file move, a validator). An earlier error, such as a
    /// cancellation that came meanwhile, wins.
    mutating func recordFailure(_ failure: AFError) {
        if error == nil { error = failure }
    }

    /// A stream handler threw: its error replaces any other, as Alamofire's `capturingError` sets it.
    mutating func replaceError(with failure: AFError) {
        error = failure
    }

    enum RetryStep {
        case none
        case finish
        case askRetrier(AFError)
    }

    /// After loading and validation, or a failure to build the request: ask the retriers when
    /// there is an error worth retrying, else finish.
    mutating func retryOrFinish(creationFailure: AFError? = nil) -> RetryStep {
        switch phase {
        case .creatingRequest, .validating: break
        default: return .none
        }
        if let creationFailure { recordFailure(creationFailure) }
        guard !isCancelled, let error, !error.isExplicitlyCancelledError, !error.isSessionDeinitializedError else { return .finish }
        phase = .awaitingRetryDecision
        return .askRetrier(error)
    }

    enum RetryDecisionAction {
        case none
        case finish
        /// Wait `delay`, then start the request over.
        case retry(delay: TimeInterval)
    }

    /// The retriers answered (already mapped by the session: a retrier's error comes as
    /// `.doNotRetryWithError(AFError.requestRetryFailed)`).
    mutating func retryDecided(_ result: RetryResult) -> RetryDecisionAction {
        guard case .awaitingRetryDecision = phase, !isCancelled else { return .none }
        switch result {
        case .retry, .retryWithDelay:
            phase = .waitingToRetry
            return .retry(delay: result.delay ?? 0)
        case .doNotRetry:
            // Decided: a second answer changes nothing; the request finishes next.
            phase = .validating
            return .finish
        case .doNotRetryWithError(let retryError):
            phase = .validating
            // A retrier's own failure replaces the request's error.
            error = retryError.asAFError(or: .requestRetryFailed(retryError: retryError, originalError: error ?? .explicitlyCancelled))
            return .finish
        }
    }

    /// A response serializer failed and the retriers decided to retry: the request starts over
    /// once `delay` has passed (the serializers run again on the new response). False when it
    /// cannot (cancelled meanwhile): the serializer then completes with its failure.
    mutating func serializerRequestedRetry() -> Bool {
        guard case .finishing = phase, !isCancelled else { return false }
        phase = .waitingToRetry
        return true
    }

    /// The retry delay has passed: whether to start over (not when cancelled meanwhile). The retry
    /// count grows and the last attempt's error and serializer completions are dropped, as
    /// Alamofire's `prepareForRetry()` does.
    mutating func retryDelayElapsed() -> Bool {
        guard case .waitingToRetry = phase, !isCancelled else { return false }
        retryCount += 1
        error = nil
        completions.removeAll()
        phase = .creatingRequest
        return true
    }

    // MARK: Response serializers

    /// Starts finishing: whether this call did (a request finishes once per attempt).
    mutating func finish() -> Bool {
        switch phase {
        case .finishing, .finished: return false
        default:
            phase = .finishing
            return true
        }
    }

    /// Whether the request has begun finishing.
    var isFinishing: Bool {
        switch phase {
        case .finishing, .finished: true
        default: false
        }
    }

    /// Whether the request is between its set-up and its finish: set up (or being set up) and not
    /// yet finishing, so that whatever happens next ends in a finish.
    var isUnderWay: Bool {
        switch phase {
        case .notStarted, .finishing, .finished: false
        default: true
        }
    }

    /// Whether every serializer has run (until another is added), however the request ended.
    var isProcessingFinished: Bool {
        if case .finished = phase { true } else { false }
    }

    /// Adds a serializer; returns whether processing had ended and must start again for it.
    mutating func appendSerializer(_ serializer: @escaping Work) -> Bool {
        serializers.append(ListedWork(run: serializer))
        guard case .finished = phase else { return false }
        phase = .finishing
        if state == .finished { state = .resumed }
        return true
    }

    enum SerializerStep {
        case none
        case run(Work)
        /// Every serializer ran: call their completions, in order.
        case complete(InlineFirstList<ListedWork>)
    }

    /// The next serializer to run, or, when none is left, the completions; both decided under one
    /// lock, so a serializer appended meanwhile is either run here or restarts processing.
    mutating func nextSerializerStep() -> SerializerStep {
        guard case .finishing = phase else { return .none }
        if completions.count < serializers.count { return .run(serializers[completions.count].run) }
        let done = completions
        serializers.removeAll()
        completions.removeAll()
        if state.canTransitionTo(.finished) { state = .finished }
        phase = .finished
        return .complete(done)
    }

    /// A serializer is done; `completion` calls the user's handler.
    mutating func serializerCompleted(_ completion: @escaping Work) {
        completions.append(ListedWork(run: completion))
    }
}
