import AFSynchronization
import Foundation
import HTTPBinServer
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import AlamofireNIOLoading
@testable import AlamofireNIOTransport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loading task in a session that waits for connectivity, against a monitor the test drives and a
/// resolver that fails until the test lets it answer: what an offline machine looks like to a task.
@Suite struct WaitingForConnectivityTests {
    typealias RecordingDelegate = LoadingTaskTests.RecordingDelegate

    /// A network the test changes by hand.
    final class ScriptedMonitor: ConnectivityMonitor {
        private struct State {
            var changes = 0
            var isOffline = true
            var waiters: [Int: @Sendable (ConnectivityWaitOutcome) -> Void] = [:]
            var nextWaiter = 0
            var stopped = false
        }
        private let state = Mutex(State())

        var changeCount: Int { state.withLock { $0.changes } }
        var isOffline: Bool { state.withLock { $0.isOffline } }
        var waiting: Int { state.withLock { $0.waiters.count } }
        var isStopped: Bool { state.withLock { $0.stopped } }

        func waitForChange(after count: Int, _ ended: @escaping @Sendable (ConnectivityWaitOutcome) -> Void) -> @Sendable () -> Void {
            let id = state.withLock { state -> Int? in
                guard state.changes <= count else { return nil }
                defer { state.nextWaiter += 1 }
                state.waiters[state.nextWaiter] = ended
                return state.nextWaiter
            }
            guard let id else {
                DispatchQueue.global().async { ended(.changed) }
                return {}
            }
            return { self.end(id) }
        }

        private func end(_ id: Int) {
            state.withLock { $0.waiters.removeValue(forKey: id) }?(.cancelled)
        }

        /// The network changes: every wait ends.
        func change(offline: Bool) {
            let ended = state.withLock { state in
                state.changes += 1
                state.isOffline = offline
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in ended { waiter(.changed) }
        }

        func stop() {
            let ended = state.withLock { state in
                state.stopped = true
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in ended { waiter(.cancelled) }
        }

        /// Waits (up to 20 s) until `count` tasks wait.
        func untilWaiting(_ count: Int = 1) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while waiting < count {
                guard ContinuousClock.now < deadline else { throw URLError(.timedOut) }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Whether the test's resolver answers yet.
    final class Resolving: Sendable {
        private let state = Mutex(false)
        var answers: Bool {
            get { state.withLock { $0 } }
            set { state.withLock { $0 = newValue } }
        }
    }

    /// A session that waits for connectivity (or not), whose host names resolve to the loopback only once
    /// `resolves` says so.
    static func session(
        waits: Bool = true, monitor: ScriptedMonitor, resolves: Resolving, resourceTimeout: TimeInterval = 30,
        clock: (any EventLoop)? = nil
    ) -> LoadingSession {
        var transportConfiguration = HTTPTransport.Configuration()
        transportConfiguration.lookup = { _, port in
            guard resolves.answers else { throw URLError(.cannotFindHost) }
            return [try SocketAddress(ipAddress: "127.0.0.1", port: port)]
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = resourceTimeout
        ConfigurationExtras.set(waits ? 1 : nil, for: .waitsForConnectivity, in: configuration)
        return LoadingSession(
            transport: HTTPTransport(configuration: transportConfiguration), configuration: configuration,
            makeConnectivityMonitor: { monitor }, clock: clock)
    }

    /// Offline, a host name does not resolve: the task waits, hears nothing more when a change leaves it offline
    /// (it waits again, silently), and is answered once the network is back; each attempt is a transaction.
    @Test func aNameThatCannotBeResolvedOfflineWaitsUntilTheNetworkIsBack() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = ScriptedMonitor()
            let resolves = Resolving()
            let delegate = RecordingDelegate()
            let task = Self.session(monitor: monitor, resolves: resolves)
                .makeTask(with: URLRequest(url: URL(string: "http://offline.test:\(server.port)/get")!), delegate: delegate)
            task.resume()
            try await monitor.untilWaiting()
            #expect(task.snapshot.status == LoadingTask.Status.running)
            monitor.change(offline: true)
            try await monitor.untilWaiting()
            resolves.answers = true
            monitor.change(offline: false)
            #expect(try await delegate.completion() == nil)
            #expect(delegate.events == ["waiting", "response 200", "data", "metrics 3", "complete ok"])
        }
    }

    /// A name that cannot be resolved while the machine has a route is the server's problem, not the network's:
    /// it fails at once, as it does in a session that does not wait.
    @Test(arguments: [(true, false), (false, true)])
    func aNameThatCannotBeResolvedFailsAtOnceWhenOnlineOrNotWaiting(waits: Bool, offline: Bool) async throws {
        let monitor = ScriptedMonitor()
        if !offline { monitor.change(offline: false) }
        let delegate = RecordingDelegate()
        let task = Self.session(waits: waits, monitor: monitor, resolves: Resolving())
            .makeTask(with: URLRequest(url: URL(string: "http://offline.test:1/get")!), delegate: delegate)
        task.resume()
        #expect(try await delegate.completion()?.code == .cannotFindHost)
        #expect(delegate.events == ["metrics 1", "complete -1003"])
    }

    @Test func aTaskCancelledWhileItWaitsCompletesAsCancelled() async throws {
        let monitor = ScriptedMonitor()
        let delegate = RecordingDelegate()
        let task = Self.session(monitor: monitor, resolves: Resolving())
            .makeTask(with: URLRequest(url: URL(string: "http://offline.test:1/get")!), delegate: delegate)
        task.resume()
        try await monitor.untilWaiting()
        task.cancel()
        #expect(try await delegate.completion()?.code == .cancelled)
        #expect(delegate.events == ["waiting", "metrics 1", "complete -999"])
        #expect(monitor.waiting == 0)
    }

    /// The resource timeout bounds the wait, counted from the task's resume, to the instant, on a
    /// hand-turned clock (a minute of it: on the system clock the completion's 30 s wait would fail);
    /// a timeout of 0 is no limit, as everywhere else.
    @Test func theResourceTimeoutEndsTheWait() async throws {
        let clock = NIOAsyncTestingEventLoop()
        let monitor = ScriptedMonitor()
        let delegate = RecordingDelegate()
        let task = Self.session(monitor: monitor, resolves: Resolving(), resourceTimeout: 60, clock: clock)
            .makeTask(with: URLRequest(url: URL(string: "http://offline.test:1/get")!), delegate: delegate)
        task.resume()
        try await monitor.untilWaiting()
        await clock.advanceTime(by: .milliseconds(59_999))
        #expect(task.snapshot.status == LoadingTask.Status.running)
        await clock.advanceTime(by: .milliseconds(1))
        #expect(try await delegate.completion()?.code == .timedOut)
        #expect(delegate.events == ["waiting", "metrics 1", "complete -1001"])
        #expect(monitor.waiting == 0)

        let unlimited = RecordingDelegate()
        let waiting = Self.session(monitor: monitor, resolves: Resolving(), resourceTimeout: 0, clock: clock)
            .makeTask(with: URLRequest(url: URL(string: "http://offline.test:1/get")!), delegate: unlimited)
        waiting.resume()
        try await monitor.untilWaiting()
        await clock.advanceTime(by: .hours(24))
        #expect(waiting.snapshot.status == LoadingTask.Status.running)
        waiting.cancel()
        #expect(try await unlimited.completion()?.code == .cancelled)
        await clock.shutdownGracefully()
    }

    /// A user's URLProtocol failing as if offline is its own answer: only the network's failures wait.
    @Test func aURLProtocolsOfflineErrorDoesNotWait() async throws {
        let monitor = ScriptedMonitor()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [OfflineProtocol.self]
        ConfigurationExtras.set(1, for: .waitsForConnectivity, in: configuration)
        let session = LoadingSession(transport: HTTPTransport(), configuration: configuration, makeConnectivityMonitor: { monitor })
        let delegate = RecordingDelegate()
        session.makeTask(with: URLRequest(url: URL(string: "http://offline.test/get")!), delegate: delegate).resume()
        #expect(try await delegate.completion()?.code == .notConnectedToInternet)
        #expect(!delegate.events.contains("waiting"))
    }

    final class OfflineProtocol: URLProtocol {
        override class func canInit(with request: URLRequest) -> Bool { true }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
        override func startLoading() { client?.urlProtocol(self, didFailWithError: URLError(.notConnectedToInternet)) }
        override func stopLoading() {}
    }
}
