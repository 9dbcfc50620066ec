#if Combine
import AFSynchronization
public import AlamofireNIO
import Foundation
import DequeModule
import Synchronization

#if canImport(Combine)
public import Combine
#else
public import OpenCombine
#endif

/// A Combine `Publisher` of the `DataStreamRequest.Stream<Value, AFError>` values of a
/// `DataStreamRequest`, as Alamofire's: each chunk's value, then the completion, then `.finished`.
///
/// Unlike Alamofire's, it respects demand: values wait (in memory) until the subscriber asks for
/// them. The request is resumed on the first demand; cancelling the subscription cancels it.
public struct DataStreamPublisher<Value: Sendable>: Publisher {
    /// A stream event.
    public typealias Output = DataStreamRequest.Stream<Value, AFError>
    /// Never fails: errors are in the events.
    public typealias Failure = Never

    private let request: DataStreamRequest
    private let streamHandler: StreamSubscription<Value>.Start

    /// Creates a publisher serializing each chunk with `serializer`.
    /// - Parameters:
    ///   - request:    The request whose stream is published.
    ///   - queue:      Where the values are published.
    ///   - serializer: What makes each chunk's value.
    public init<Serializer: DataStreamSerializer>(_ request: DataStreamRequest, queue: DispatchQueue, serializer: Serializer)
    where Value == Serializer.SerializedObject {
        self.request = request
        streamHandler = { request.responseStream(using: serializer, on: queue, stream: $0).resume() }
    }

    /// Publishes each value's `Result`, and the completion's error as a failure.
    public func result() -> AnyPublisher<Result<Value, AFError>, Never> {
        compactMap { stream in
            switch stream.event {
            case .stream(let result): result
            case .complete(let completion): completion.error.map(Result.failure)
            }
        }
        .eraseToAnyPublisher()
    }

    /// Publishes the values, or fails with the first error.
    public func value() -> AnyPublisher<Value, AFError> {
        result().setFailureType(to: AFError.self).flatMap { $0.valuePublisher }.eraseToAnyPublisher()
    }

    /// Attaches `subscriber`.
    public func receive<S>(subscriber: S) where S: Subscriber & Sendable, S.Failure == Failure, S.Input == Output {
        subscriber.receive(subscription: StreamSubscription(start: streamHandler, request: request, downstream: subscriber))
    }
}

/// The subscription of a ``DataStreamPublisher``: events wait in a queue until demanded. Each
/// chunk is taken from the request as it arrives, as Alamofire's stream handlers take them, so a
/// subscriber that stops demanding lets the waiting events grow.
final class StreamSubscription<Value: Sendable>: Subscription, Sendable {
    typealias Output = DataStreamRequest.Stream<Value, AFError>
    /// Adds the stream handler and resumes the request.
    typealias Start = @Sendable (@escaping DataStreamRequest.Handler<Value, AFError>) -> Void

    private struct State {
        /// Adds the stream handler, until the first demand. The handler holds this subscription, so
        /// neither this nor the request is kept once used, or they would keep each other alive.
        var start: Start?
        /// The request, until its completion is delivered or the subscription cancelled.
        var request: DataStreamRequest?
        var send: (@Sendable (Output) -> Subscribers.Demand)?
        var finish: (@Sendable () -> Void)?
        var demand = Subscribers.Demand.none
        var waiting = Deque<Output>()
        var delivering = false
    }

    private let state: Mutex<State>

    init<Downstream: Subscriber & Sendable>(start: @escaping Start, request: DataStreamRequest, downstream: Downstream)
    where Downstream.Input == Output, Downstream.Failure == Never {
        var initial = State()
        initial.start = start
        initial.request = request
        initial.send = { downstream.receive($0) }
        initial.finish = { downstream.receive(completion: .finished) }
        state = Mutex(initial)
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        let start = state.withLock { state -> Start? in
            guard state.send != nil else { return nil }
            state.demand += demand
            return state.start.take()
        }
        start? { [self] stream in enqueue(stream) }
        drain()
    }

    func cancel() {
        let request = state.withLock { state in
            state.send = nil
            state.finish = nil
            state.start = nil
            state.waiting.removeAll()
            return state.request.take()
        }
        request?.cancel()
    }

    private func enqueue(_ stream: Output) {
        state.withLock { state in
            if state.send != nil { state.waiting.append(stream) }
        }
        drain()
    }

    /// Delivers waiting events while there is demand, one thread at a time, outside the lock.
    private func drain() {
        while true {
            let next: (Output, @Sendable (Output) -> Subscribers.Demand, (@Sendable () -> Void)?)? = state.withLock { state in
                guard !state.delivering, state.demand > 0, let send = state.send, let event = state.waiting.popFirst() else { return nil }
                state.demand -= 1
                state.delivering = true
                guard case .complete = event.event else { return (event, send, nil) }
                let finish = state.finish
                state.send = nil
                state.finish = nil
                state.request = nil
                return (event, send, finish)
            }
            guard let (event, send, finish) = next else { return }
            let more = send(event)
            finish?()
            state.withLock { state in
                state.demand += more
                state.delivering = false
            }
        }
    }
}

#endif
