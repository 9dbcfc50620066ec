import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// What the server has seen of its connections, so tests can check reuse and pool limits.
public struct ConnectionStatistics: Sendable, Equatable {
    /// Connections accepted since the server started (or since the last reset).
    public var acceptedConnections: Int
    /// Connections open right now.
    public var openConnections: Int
    /// The most connections that were open at the same moment.
    public var peakOpenConnections: Int
    /// Requests served on each accepted connection, in the order the connections were accepted.
    public var requestsPerConnection: [Int]
    /// Requests waiting at each closed gate now, by gate name (see ``HTTPBinServer/release(_:)``).
    public var heldRequests: [String: Int]

    /// - Parameters:
    ///   - acceptedConnections: connections accepted.
    ///   - openConnections: connections open now.
    ///   - peakOpenConnections: the most connections open at once.
    ///   - requestsPerConnection: requests served on each connection, in accept order.
    ///   - heldRequests: requests waiting at each closed gate.
    public init(
        acceptedConnections: Int = 0, openConnections: Int = 0, peakOpenConnections: Int = 0, requestsPerConnection: [Int] = [],
        heldRequests: [String: Int] = [:]
    ) {
        self.acceptedConnections = acceptedConnections
        self.openConnections = openConnections
        self.peakOpenConnections = peakOpenConnections
        self.requestsPerConnection = requestsPerConnection
        self.heldRequests = heldRequests
    }

    /// Requests served over all connections.
    public var totalRequests: Int { requestsPerConnection.reduce(0, +) }
}

/// Counts connections and the requests on each, across every listener of one server.
final class ConnectionRecorder: Sendable {
    private struct State {
        var statistics = ConnectionStatistics()
        /// Index into `requestsPerConnection` of each open connection, by its channel.
        var openIndices: [ObjectIdentifier: Int] = [:]
        /// The open connections, for a shutdown that cannot wait for their clients.
        var openChannels: [ObjectIdentifier: any Channel] = [:]
        /// Callers waiting for the statistics to meet a condition, by the number their wait was given.
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        /// The requests held at each closed gate, by a number of their own.
        var held: [String: [Int: EventLoopPromise<Void>]] = [:]
        var nextHoldID = 0
        /// The gates released: a request reaching one goes on at once.
        var openGates: Set<String> = []
        /// Set once the server shuts down: a request reaching a closed gate fails at once.
        var isShuttingDown = false

        /// Removes the waiters whose condition now holds, and returns how to resume them.
        mutating func satisfiedWaiters() -> [Resumption] {
            let statistics = self.statistics
            let ready = waiters.filter { $0.value.condition(statistics) }
            for id in ready.keys { waiters.removeValue(forKey: id) }
            return ready.values.map { Resumption(waiter: $0, result: .success(())) }
        }
    }

    /// A caller waiting for a condition, and the timer that fails the wait at its deadline.
    struct Waiter {
        var condition: @Sendable (ConnectionStatistics) -> Bool
        var continuation: CheckedContinuation<Void, any Error>
        var timer: Scheduled<Void>?
    }

    /// A wait to end, once the lock is released.
    struct Resumption {
        var waiter: Waiter
        var result: Result<Void, any Error>

        func resume() {
            waiter.timer?.cancel()
            waiter.continuation.resume(with: result)
        }
    }
    private let state = NIOLockedValueBox(State())

    var statistics: ConnectionStatistics { state.withLockedValue { $0.statistics } }

    func reset() {
        state.withLockedValue { state in
            // Connections still open keep being counted, as new entries.
            state.statistics = ConnectionStatistics(
                openConnections: state.openIndices.count, peakOpenConnections: state.openIndices.count)
            for (offset, key) in state.openIndices.keys.enumerated() {
                state.openIndices[key] = offset
                state.statistics.requestsPerConnection.append(0)
            }
            // Requests still held stay counted.
            state.statistics.heldRequests = state.held.compactMapValues { $0.isEmpty ? nil : $0.count }
        }
    }

    func connectionOpened(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let ready = state.withLockedValue { state in
            state.openIndices[key] = state.statistics.requestsPerConnection.count
            state.openChannels[key] = channel
            state.statistics.requestsPerConnection.append(0)
            state.statistics.acceptedConnections += 1
            state.statistics.openConnections += 1
            state.statistics.peakOpenConnections = max(state.statistics.peakOpenConnections, state.statistics.openConnections)
            return state.satisfiedWaiters()
        }
        ready.forEach { $0.resume() }
        channel.closeFuture.whenComplete { _ in
            let ready = self.state.withLockedValue { state -> [Resumption] in
                state.openChannels.removeValue(forKey: key)
                if state.openIndices.removeValue(forKey: key) != nil {
                    state.statistics.openConnections -= 1
                }
                return state.satisfiedWaiters()
            }
            ready.forEach { $0.resume() }
        }
    }

    /// Closes every connection still open (a client keeping an idle one would otherwise hold up a
    /// graceful shutdown until the server's idle timeout).
    func closeOpenConnections() {
        let channels = state.withLockedValue { Array($0.openChannels.values) }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Returns once the statistics meet `condition`.
    /// - Throws: ``ConnectionStatisticsWaitTimedOut`` when they do not within `timeout`, and
    ///   `CancellationError` when the calling task is cancelled first.
    func waitUntil(within timeout: Duration, _ condition: @escaping @Sendable (ConnectionStatistics) -> Bool) async throws {
        let id = state.withLockedValue { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLockedValue { state in
                    if condition(state.statistics) { return .success(()) }
                    // A cancel before this point set the flag before its handler ran, and the
                    // handler (taking the lock) found no waiter: it is seen here instead.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
                        self.endWait(id) { ConnectionStatisticsWaitTimedOut(timeout: timeout, statistics: $0) }
                    }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation, timer: timer)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            endWait(id) { _ in CancellationError() }
        }
    }

    /// Fails the wait numbered `id`, if it is still waiting.
    private func endWait(_ id: Int, with error: (ConnectionStatistics) -> any Error) {
        let resumption = state.withLockedValue { state in
            state.waiters.removeValue(forKey: id).map { Resumption(waiter: $0, result: .failure(error(state.statistics))) }
        }
        resumption?.resume()
    }

    /// Holds the request on `channel` at `gate` until ``release(_:)`` opens it.
    /// - Throws: `ChannelError.ioOnClosedChannel` when the client leaves first, its HTTP/2 stream
    ///   closes, or the server is shutting down.
    func hold(at gate: String, on channel: any Channel) async throws {
        enum Outcome {
            case open
            case closing
            case held(id: Int, promise: EventLoopPromise<Void>, ready: [Resumption])
        }
        let outcome = state.withLockedValue { state -> Outcome in
            if state.openGates.contains(gate) { return .open }
            if state.isShuttingDown { return .closing }
            defer { state.nextHoldID += 1 }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            state.held[gate, default: [:]][state.nextHoldID] = promise
            state.statistics.heldRequests[gate, default: 0] += 1
            return .held(id: state.nextHoldID, promise: promise, ready: state.satisfiedWaiters())
        }
        guard case .held(let id, let promise, let ready) = outcome else {
            if case .closing = outcome { throw ChannelError.ioOnClosedChannel }
            return
        }
        ready.forEach { $0.resume() }
        promise.futureResult.whenFailure { _ in
            let ready = self.state.withLockedValue { state -> [Resumption] in
                guard state.held[gate]?.removeValue(forKey: id) != nil else { return [] }
                state.statistics.heldRequests[gate, default: 1] -= 1
                if state.statistics.heldRequests[gate] == 0 { state.statistics.heldRequests[gate] = nil }
                return state.satisfiedWaiters()
            }
            ready.forEach { $0.resume() }
        }
        try await Exchange.wait(for: promise, unlessClosed: channel)
    }

    /// Opens `gate` for the server's life: the requests held there go on, and so does every later one
    /// that reaches it.
    func release(_ gate: String) {
        let (held, ready) = state.withLockedValue { state in
            state.openGates.insert(gate)
            state.statistics.heldRequests[gate] = nil
            return (state.held.removeValue(forKey: gate).map { Array($0.values) } ?? [], state.satisfiedWaiters())
        }
        held.forEach { $0.succeed() }
        ready.forEach { $0.resume() }
    }

    /// Fails every held request, and from now on every request that reaches a closed gate (the server
    /// is shutting down).
    func failHeldRequests() {
        let held = state.withLockedValue { state in
            state.isShuttingDown = true
            return state.held.values.flatMap(\.values)
        }
        held.forEach { $0.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Records a request served on `channel`: the connection itself for HTTP/1, a stream of it for HTTP/2.
    func requestReceived(on channel: any Channel) {
        let ready = state.withLockedValue { state in
            let index = state.openIndices[ObjectIdentifier(channel)] ?? channel.parent.flatMap { state.openIndices[ObjectIdentifier($0)] }
            if let index { state.statistics.requestsPerConnection[index] += 1 }
            return state.satisfiedWaiters()
        }
        ready.forEach { $0.resume() }
    }
}

/// A wait for the server's statistics that did not end in time: what was expected never happened.
public struct ConnectionStatisticsWaitTimedOut: Error, CustomStringConvertible {
    /// How long the wait lasted.
    public var timeout: Duration
    /// The statistics when it gave up.
    public var statistics: ConnectionStatistics

    public var description: String { "the server's statistics did not meet the condition within \(timeout): \(statistics)" }
}

extension Duration {
    /// The duration in whole nanoseconds.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole + attoseconds / 1_000_000_000
    }
}

/// Wraps a listener's child channel setup to tell the recorder of every accepted connection.
struct RecordingChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let recorder: ConnectionRecorder

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        recorder.connectionOpened(channel)
        do {
            try channel.pipeline.syncOperations.addHandler(ClientDepartureHandler(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Notices a client leaving while a request is still being handled. Hummingbird allows half-closure,
/// so a client's FIN arrives as `inputClosed` rather than closing the channel; this handler keeps a
/// future that completes on either, for slow endpoints to stop waiting (see `Exchange.pause`).
final class ClientDepartureHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var promise: EventLoopPromise<Void>?

    /// Completes when the client has closed its side of the connection, or the connection closed.
    var departure: EventLoopFuture<Void>? { promise?.futureResult }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        self.promise = promise
        context.channel.closeFuture.whenComplete { _ in promise.succeed() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { promise?.succeed() }
        context.fireUserInboundEventTriggered(event)
    }
}
