import AFSynchronization
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The validation and serializer-dispatch core that every kind of request shares: a kind only says
/// how its outcome is serialized, how that becomes its response type and which monitor event
/// reports it.
extension Request {
    /// What a validator or serializer needs of the finished request, read under one lock.
    struct Outcome {
        let request: URLRequest?
        /// The response as it arrived; ``response`` makes it Foundation's type.
        let receivedResponse: ReceivedResponse?
        var response: HTTPURLResponse? { receivedResponse?.httpURLResponse }
        let data: Data?
        let fileURL: URL?
        let metrics: TaskMetrics?
        let error: AFError?
        /// A download's resume data: its cancel's, else its error's.
        var resumeData: Data? { storedResumeData ?? error?.downloadResumeData }
        let storedResumeData: Data?
    }

    var outcome: Outcome {
        mutableState.withLock { state in
            Outcome(
                request: state.requests.last, receivedResponse: state.response, data: state.data, fileURL: state.fileURL,
                metrics: state.allMetrics.last, error: state.machine.error, storedResumeData: state.resumeData)
        }
    }

    // MARK: Validation

    /// Adds a validator that runs `check` once the response has arrived, unless the request has
    /// already failed or has no response; a failure becomes the request's error (unless a
    /// cancellation came meanwhile). `report` tells the monitors what was checked.
    func appendValidator(
        _ check: @escaping @Sendable (Outcome, HTTPURLResponse) -> ValidationResult,
        report: @escaping @Sendable (Outcome, HTTPURLResponse, ValidationResult) -> Void
    ) {
        let validator: @Sendable () -> Void = { [unowned self] in
            let outcome = self.outcome
            guard outcome.error == nil, let response = outcome.response else { return }
            let result = check(outcome, response)
            if case .failure(let failure) = result {
                recordFailure(failure.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: failure))))
            }
            report(outcome, response, result)
        }
        mutableState.withLock { $0.validators.append(validator) }
    }

    // MARK: Serializers

    /// Adds a serializer: once the request has finished, `serialize` runs on the serialization
    /// queue, `makeResponse` wraps its result in the kind's response, `report` tells the monitors,
    /// and `completionHandler` gets it on `queue` when every serializer before it has run.
    ///
    /// When `retriesOnFailure` (every serializer but the plain `response` handlers) and the result
    /// is a failure, the retriers are asked, as Alamofire asks them: a retry starts the request over
    /// and every serializer runs again on the new response; a retrier's error replaces the result's.
    func appendResponseSerializer<Value, Response>(
        queue: DispatchQueue, retriesOnFailure: Bool = true,
        serialize: @escaping @Sendable (Outcome) -> (result: Result<Value, AFError>, duration: TimeInterval),
        makeResponse: @escaping @Sendable (Outcome, Result<Value, AFError>, TimeInterval) -> Response,
        report: @escaping @Sendable (Response) -> Void, completionHandler: @escaping @Sendable (Response) -> Void
    ) {
        appendResponseSerializer {
            let outcome = self.outcome
            let (result, duration) = serialize(outcome)
            // The response may hold values the compiler cannot prove Sendable (a parsed JSON `Any`):
            // it is made here and only handed to the user's queue.
            let response = UncheckedSendable(makeResponse(outcome, result, duration))
            report(response.value)
            let complete: @Sendable (UncheckedSendable<Response>) -> Void = { response in
                self.responseSerializerDidComplete(completion: self.deliver(on: queue) { completionHandler(response.value) })
            }
            guard retriesOnFailure, case .failure(let failure) = result, !self.isCancelled else { return complete(response) }
            @Sendable func decided(_ retryResult: RetryResult) {
                switch retryResult {
                case .doNotRetry:
                    complete(response)
                case .doNotRetryWithError(let retryError):
                    let replaced = Result<Value, AFError>.failure(
                        retryError.asAFError(or: .requestRetryFailed(retryError: retryError, originalError: failure)))
                    complete(UncheckedSendable(makeResponse(outcome, replaced, duration)))
                case .retry, .retryWithDelay:
                    guard let session = self.session, self.mutableState.withLock({ $0.machine.serializerRequestedRetry() }) else {
                        return complete(response)
                    }
                    session.retryRequest(self, withDelay: retryResult.delay)
                }
            }
            guard let session = self.session else { return decided(.doNotRetry) }
            session.retryResult(for: self, dueTo: failure) { retryResult in
                // The retriers answer on the root queue; completions continue on the serialization queue.
                self.serializationQueue.async { decided(retryResult) }
            }
        }
    }

    /// Runs a serializer and times it; an error that is not an ``AFError`` becomes
    /// `.responseSerializationFailed(.customSerializationFailed)`, as in Alamofire.
    func serializeTimed<Value>(_ serialize: () throws -> Value) -> (result: Result<Value, AFError>, duration: TimeInterval) {
        let start = ProcessInfo.processInfo.systemUptime
        let result: Result<Value, AFError>
        do {
            result = .success(try serialize())
        } catch {
            result = .failure(error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        return (result, ProcessInfo.processInfo.systemUptime - start)
    }

    /// Adds a serializer; it runs when the request has finished (at once if it has), and resumes
    /// the request if it resumes automatically.
    func appendResponseSerializer(_ serializer: @escaping @Sendable () -> Void) {
        let (processNow, canResume) = mutableState.withLock { state in
            (state.machine.appendSerializer(serializer), state.machine.state.canTransitionTo(.resumed))
        }
        if processNow { underlyingQueue.async { self.processNextResponseSerializer() } }
        // Resumed after the statement adding the handler, as in Alamofire.
        // Without its session (gone), the resume finishes the request with `.sessionDeinitialized`.
        if canResume, shouldAutomaticallyResume ?? session?.startRequestsImmediately ?? true { resumeAutomatically() }
    }

    /// Runs `completion` on `queue`: inline when that is the serialization queue, where completions
    /// are already being delivered (as for the async APIs), else dispatched to it.
    func deliver(on queue: DispatchQueue, _ completion: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        if queue === serializationQueue { return completion }
        return { queue.async(execute: completion) }
    }

    /// Called by a serializer when it is done; `completion` is the call to the user's handler.
    func responseSerializerDidComplete(completion: @escaping @Sendable () -> Void) {
        mutableState.withLock { $0.machine.serializerCompleted(completion) }
        processNextResponseSerializer()
    }

    /// Runs the next serializer, or, when none is left, calls the completions and cleans up.
    func processNextResponseSerializer() {
        switch mutableState.withLock({ $0.machine.nextSerializerStep() }) {
        case .none:
            break
        case .run(let serializer):
            serializationQueue.async { serializer() }
        case .complete(let completions):
            completions.forEach { $0.run() }
            cleanup()
        }
    }
}
