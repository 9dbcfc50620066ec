import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

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

    /// - Parameters:
    ///   - acceptedConnections: connections accepted.
    ///   - openConnections: connections open now.
    ///   - peakOpenConnections: the most connections open at once.
    ///   - requestsPerConnection: requests served on each connection, in accept order.
    public init(acceptedConnections: Int = 0, openConnections: Int = 0, peakOpenConnections: Int = 0, requestsPerConnection: [Int] = []) {
        self.acceptedConnections = acceptedConnections
        self.openConnections = openConnections
        self.peakOpenConnections = peakOpenConnections
        self.requestsPerConnection = requestsPerConnection
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
        /// Callers waiting for the statistics to meet a condition.
        var waiters: [(condition: @Sendable (ConnectionStatistics) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// Removes and returns the waiters whose condition now holds.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let statistics = self.statistics
            let ready = waiters.filter { $0.condition(statistics) }.map(\.continuation)
            waiters.removeAll { $0.condition(statistics) }
            return ready
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
            let ready = self.state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
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
    func waitUntil(_ condition: @escaping @Sendable (ConnectionStatistics) -> Bool) async {
        await withCheckedContinuation { continuation in
            let isReady = state.withLockedValue { state in
                guard !condition(state.statistics) else { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
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
