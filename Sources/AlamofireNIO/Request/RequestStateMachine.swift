import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules of a ``Request``'s life, as a value: the public ``Request/State``, where the request is
/// in its pipeline (``Phase``), its error and its response serializers. Each event returns what the
/// request must do next; the request does it after releasing its lock. Generic over the loading
/// task so that tests drive it with a stand-in.
///
/// ```
/// creatingRequest ─created─▶ waitingForResume ─resume─▶ loading ─completed─▶ validating
///        ▲                        (resumed: straight to loading)                  │
///        └── waitingToRetry ◀─retry── awaitingRetryDecision ◀─failed──────────────┤
///                                            └─don't retry─▶ finishing ◀─passed───┘
/// finishing ─serializers done─▶ finished ─serializer added─▶ finishing
/// ```
/// A cancel stops a running loading task (whose completion then finishes the request) or, when no
/// task runs, finishes the request at once; events that arrive for the abandoned pipeline after that
/// (a URL request built, a retrier's answer, a retry delay) are ignored. The first error stays: a
/// validation or retry answer never overwrites the cancellation.
struct RequestStateMachine<Task: AnyObject & Sendable> {
    typealias Work = @Sendable () -> Void

    enum Phase {
        case creatingRequest
        case waitingForResume(URLRequest)
        /// The task, once made (nil while it is being made).
        case loading(Task?)
        case validating
        case awaitingRetryDecision
        case waitingToRetry
        case finishing
        case finished
    }

    private(set) var state: Request.State = .initialized
    private(set) var phase: Phase = .creatingRequest
    private(set) var error: AFError?
    private(set) var retryCount = 0
    private var serializers: [Work] = []
    private var completions: [Work] = []

    var isCancelled: Bool { state == .cancelled }

    // MARK: Control

    enum ResumeAction {
        case none
        /// Tell the monitors; load `URLRequest` if it was waiting.
        case resumed(load: URLRequest?)
    }

    mutating func resume() -> ResumeAction {
        guard state.canTransitionTo(.resumed) else { return .none }
        state = .resumed
        guard case .waitingForResume(let urlRequest) = phase else { return .resumed(load: nil) }
        phase = .loading(nil)
        return .resumed(load: urlRequest)
    }

    /// Whether the request was suspended (and the monitors are to be told).
    mutating func suspend() -> Bool {
        guard state.canTransitionTo(.suspended) else { return false }
        state = .suspended
        return true
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
        guard state.canTransitionTo(.cancelled) else { return .none }
        state = .cancelled
        if error == nil { error = .explicitlyCancelled }
        switch phase {
        case .loading(let task?):
            return .cancelTask(task)
        case .finishing, .finished:
            return .notify
        case .creatingRequest, .waitingForResume, .loading(nil), .validating, .awaitingRetryDecision, .waitingToRetry:
            return .finish
        }
    }

    // MARK: Pipeline

    enum CreatedAction {
        case none
        case load(URLRequest)
        case waitForResume
    }

    /// The `URLRequest` is built and adapted.
    mutating func urlRequestCreated(_ urlRequest: URLRequest) -> CreatedAction {
        guard case .creatingRequest = phase, !isCancelled else { return .none }
        guard state == .resumed else {
            phase = .waitingForResume(urlRequest)
            return .waitForResume
        }
        phase = .loading(nil)
        return .load(urlRequest)
    }

    enum TaskAction {
        case resume(Task)
        /// Cancelled while it was being made: it is not started, the cancel already finished the request.
        case discard
    }

    mutating func loadingTaskCreated(_ task: Task) -> TaskAction {
        guard case .loading(nil) = phase, !isCancelled else { return .discard }
        phase = .loading(task)
        return .resume(task)
    }

    /// The loading task completed; returns the request's error (the load's, unless one came first).
    mutating func loadCompleted(error loadError: AFError?) -> AFError? {
        if case .loading = phase { phase = .validating }
        if error == nil { error = loadError }
        return error
    }

    /// A failure found after loading (a file move, a validator). An earlier error, such as a
    /// cancellation that came meanwhile, wins.
    mutating func recordFailure(_ failure: AFError) {
        if error == nil { error = failure }
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
        guard !isCancelled, let error, !error.isExplicitlyCancelledError else { return .finish }
        phase = .awaitingRetryDecision
        return .askRetrier(error)
    }

    enum RetryDecisionAction {
        case none
        case finish
        /// Clear the last attempt and build the request again after `delay`.
        case retry(delay: TimeInterval)
    }

    mutating func retryDecided(_ result: RetryResult) -> RetryDecisionAction {
        guard case .awaitingRetryDecision = phase, !isCancelled else { return .none }
        switch result {
        case .retry, .retryWithDelay:
            retryCount += 1
            error = nil
            phase = .waitingToRetry
            return .retry(delay: result.delay ?? 0)
        case .doNotRetry:
            return .finish
        case .doNotRetryWithError(let retryError):
            if let originalError = error {
                error = .requestRetryFailed(retryError: retryError, originalError: originalError)
            }
            return .finish
        }
    }

    /// The retry delay has passed: whether to build the request again (not when cancelled meanwhile).
    mutating func retryDelayElapsed() -> Bool {
        guard case .waitingToRetry = phase, !isCancelled else { return false }
        phase = .creatingRequest
        return true
    }

    // MARK: Response serializers

    /// Starts finishing: whether this call did (a request finishes once).
    mutating func finish() -> Bool {
        switch phase {
        case .finishing, .finished: return false
        default:
            phase = .finishing
            return true
        }
    }

    struct AppendAction {
        /// Processing had ended: start it again for the new serializer.
        var processNow: Bool
        /// The request was never resumed: resume it if the session starts requests immediately.
        var resumeNow: Bool
    }

    mutating func appendSerializer(_ serializer: @escaping Work) -> AppendAction {
        serializers.append(serializer)
        var processNow = false
        if case .finished = phase {
            phase = .finishing
            if state == .finished { state = .resumed }
            processNow = true
        }
        return AppendAction(processNow: processNow, resumeNow: state == .initialized)
    }

    enum SerializerStep {
        case none
        case run(Work)
        /// Every serializer ran: call their completions, in order.
        case complete([Work])
    }

    /// The next serializer to run, or, when none is left, the completions; both decided under one
    /// lock, so a serializer appended meanwhile is either run here or restarts processing.
    mutating func nextSerializerStep() -> SerializerStep {
        guard case .finishing = phase else { return .none }
        if completions.count < serializers.count { return .run(serializers[completions.count]) }
        let done = completions
        serializers.removeAll()
        completions.removeAll()
        if state.canTransitionTo(.finished) { state = .finished }
        phase = .finished
        return .complete(done)
    }

    /// A serializer is done; `completion` calls the user's handler.
    mutating func serializerCompleted(_ completion: @escaping Work) {
        completions.append(completion)
    }
}
