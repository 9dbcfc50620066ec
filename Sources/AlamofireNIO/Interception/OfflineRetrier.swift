import AFSynchronization
public import Foundation
import Synchronization

/// Network framework's interface kinds, which Linux lacks: the names `OfflineRetrier`'s initializers take. On Linux
/// an interface named `wl*` is `.wifi`; `wwan*`, `rmnet*` and `ccmni*` (or raw-IP links) are `.cellular`; other
/// Ethernet links (veth and bridges included) are `.wiredEthernet`; the loopback is `.loopback`; the rest `.other`.
public enum NWInterface {
    /// The kind of a network interface.
    public enum InterfaceType: Equatable, Hashable, Sendable {
        /// Any other kind of interface.
        case other
        /// A Wi-Fi interface (`wl*` on Linux).
        case wifi
        /// A cellular interface (`wwan*`, `rmnet*`, `ccmni*`, or a raw-IP link, on Linux).
        case cellular
        /// A wired Ethernet interface, veth and bridges included.
        case wiredEthernet
        /// The loopback interface.
        case loopback

        init(_ kind: InterfaceKind) {
            switch kind {
            case .wifi: self = .wifi
            case .cellular: self = .cellular
            case .wiredEthernet: self = .wiredEthernet
            case .loopback: self = .loopback
            case .other: self = .other
            }
        }
    }
}

/// `RequestRetrier` which waits for connectivity to be restored to retry requests that failed because the device was
/// offline. On Linux connectivity is the routing table, followed through rtnetlink as ``NetworkReachabilityManager``
/// follows it (Alamofire uses `NWPathMonitor`): the path is available while a default route leaves through an
/// interface that is up and running (of the required kind, or of none of the prohibited ones).
public final class OfflineRetrier: RequestAdapter, RequestRetrier, RequestInterceptor, Sendable {
    /// Default amount of time to wait for connectivity to be restored before failure. `.seconds(5)` by default.
    public static let defaultWait: DispatchTimeInterval = .seconds(5)
    /// Default `Set<URLError.Code>` used to check for offline errors. `[.notConnectedToInternet]` by default.
    public static let defaultURLErrorOfflineCodes: Set<URLError.Code> = [.notConnectedToInternet]
    /// Default method of detecting whether a particular `any Error` means connectivity is offline.
    public static let defaultIsOfflineError: @Sendable (_ error: any Error) -> Bool = { error in
        if let error = error.asAFError?.underlyingError {
            defaultIsOfflineError(error)
        } else if let error = error as? URLError {
            defaultURLErrorOfflineCodes.contains(error.code)
        } else {
            false
        }
    }

    private static let monitorQueue = DispatchQueue(label: "org.alamofire.offlineRetrier.monitorQueue")

    fileprivate struct State {
        var timeoutWorkItem: DispatchWorkItem?
        var currentMonitor: NetworkPathMonitor?
        var pendingCompletions: [@Sendable (_ retryResult: RetryResult) -> Void] = []
    }

    private let maximumWait: DispatchTimeInterval
    private let isOfflineError: @Sendable (_ error: any Error) -> Bool
    private let makeMonitor: @Sendable () -> NetworkPathMonitor
    private let scheduler: any DelayedWorkScheduler
    private let state = Mutex(State())

    /// Creates an instance that watches the routing table for any usable interface.
    ///
    /// - Parameters:
    ///   - maximumWait:    `DispatchTimeInterval` to wait for connectivity before giving up (the request then fails
    ///                     with its original error).
    ///   - isOfflineError: Predicate closure used to determine whether a particular `any Error` indicates connectivity
    ///                     is offline. Returning `false` moves to the next retrier, if any.
    @preconcurrency public convenience init(
        maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        self.init(
            monitor: NetworkPathMonitor(source: NetlinkSocket(), accepting: { _ in true }), maximumWait: maximumWait,
            isOfflineError: isOfflineError)
    }

    /// Creates an instance whose path is available only through an interface of `requiredInterfaceType`.
    @preconcurrency public convenience init(
        requiredInterfaceType: NWInterface.InterfaceType, maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        self.init(
            monitor: NetworkPathMonitor(source: NetlinkSocket(), accepting: { NWInterface.InterfaceType($0) == requiredInterfaceType }),
            maximumWait: maximumWait, isOfflineError: isOfflineError)
    }

    /// Creates an instance whose path is available only through an interface of none of `prohibitedInterfaceTypes`.
    @preconcurrency public convenience init(
        prohibitedInterfaceTypes: [NWInterface.InterfaceType], maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        self.init(
            monitor: NetworkPathMonitor(
                source: NetlinkSocket(), accepting: { !prohibitedInterfaceTypes.contains(NWInterface.InterfaceType($0)) }),
            maximumWait: maximumWait, isOfflineError: isOfflineError)
    }

    /// A new monitor is made from `monitor` each time a request fails offline and none is running.
    /// The wait's timer runs on `scheduler` (a manual clock in tests).
    init(
        monitor: @autoclosure @escaping @Sendable () -> NetworkPathMonitor, maximumWait: DispatchTimeInterval,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError,
        scheduler: any DelayedWorkScheduler = DispatchDelayedWorkScheduler()
    ) {
        self.makeMonitor = monitor
        self.maximumWait = maximumWait
        self.isOfflineError = isOfflineError
        self.scheduler = scheduler
    }

    deinit {
        state.withLock { $0.cleanUp() }?.stop()
    }

    /// Waits for connectivity, up to the maximum wait, when `error` means the device is offline, then retries; completes
    /// with `.doNotRetry` when the wait ends first or the error is of another kind.
    @preconcurrency public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard isOfflineError(error) else { return completion(.doNotRetry) }
        let monitor = state.withLock { state -> NetworkPathMonitor? in
            state.pendingCompletions.append(completion)
            guard state.currentMonitor == nil else { return nil }
            let monitor = makeMonitor()
            state.currentMonitor = monitor
            // A weak retrier: one dropped while waiting ends its wait with nothing to call.
            let timeout = DispatchWorkItem { [weak self] in self?.perform(.doNotRetry) }
            state.timeoutWorkItem = timeout
            scheduler.schedule(after: maximumWait.seconds, on: Self.monitorQueue, timeout)
            return monitor
        }
        guard let monitor else { return }
        // Started outside the lock: its first answer may come at once. A wait that ended before the
        // start has already stopped the monitor, which then started anyway: it is stopped again.
        monitor.start(on: Self.monitorQueue) { [weak self] in self?.perform(.retry) }
        if state.withLock({ $0.currentMonitor !== monitor }) { monitor.stop() }
    }

    /// Connectivity came back (retry) or the wait ended (do not retry, keeping the original error).
    private func perform(_ result: RetryResult) {
        let (completions, monitor) = state.withLock { state in
            let completions = state.pendingCompletions
            return (completions, state.cleanUp())
        }
        monitor?.stop()
        for completion in completions { Self.monitorQueue.async { completion(result) } }
    }
}

extension OfflineRetrier.State {
    /// Forgets the waiting requests, the timer and the monitor, which is returned to be stopped outside the lock.
    fileprivate mutating func cleanUp() -> NetworkPathMonitor? {
        pendingCompletions.removeAll()
        timeoutWorkItem?.cancel()
        timeoutWorkItem = nil
        defer { currentMonitor = nil }
        return currentMonitor
    }
}

extension RequestInterceptor where Self == OfflineRetrier {
    /// Creates an `OfflineRetrier` that watches the routing table for any usable interface.
    @preconcurrency public static func offlineRetrier(
        maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(maximumWait: maximumWait, isOfflineError: isOfflineError)
    }

    /// Creates an `OfflineRetrier` whose path is available only through an interface of `requiredInterfaceType`.
    @preconcurrency public static func offlineRetrier(
        requiredInterfaceType: NWInterface.InterfaceType, maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(requiredInterfaceType: requiredInterfaceType, maximumWait: maximumWait, isOfflineError: isOfflineError)
    }

    /// Creates an `OfflineRetrier` whose path is available only through an interface of none of `prohibitedInterfaceTypes`.
    @preconcurrency public static func offlineRetrier(
        prohibitedInterfaceTypes: [NWInterface.InterfaceType], maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(prohibitedInterfaceTypes: prohibitedInterfaceTypes, maximumWait: maximumWait, isOfflineError: isOfflineError)
    }
}

/// Says once when a usable path exists (at once, if one does now), as `NWPathMonitor`'s first satisfied path does for
/// Alamofire's retrier: it follows the routing table from a ``RoutingMessageSource``.
final class NetworkPathMonitor: Sendable {
    private let source: any RoutingMessageSource
    private let accepting: @Sendable (InterfaceKind) -> Bool
    /// The table followed since the latest start, and how many starts there were: what a source started
    /// earlier delivers late is not applied to a later table.
    private let followed = Mutex((table: FollowedRoutingTable(), generation: 0))

    init(source: any RoutingMessageSource, accepting: @escaping @Sendable (InterfaceKind) -> Bool) {
        self.source = source
        self.accepting = accepting
    }

    /// Calls `onAvailable` on `queue` each time the table, once whole, has a usable default route.
    func start(on queue: DispatchQueue, onAvailable: @escaping @Sendable () -> Void) {
        let accepting = accepting
        let generation = followed.withLock { followed in
            followed = (FollowedRoutingTable(), followed.generation + 1)
            return followed.generation
        }
        let started = source.start(on: queue) { [weak self] event in
            guard let self else { return }
            let available = followed.withLock { followed in
                guard followed.generation == generation else { return false }
                return followed.table.apply(event)?.defaultRouteInterface(accepting: accepting) != nil
            }
            if available { onAvailable() }
        }
        // Without rtnetlink (a sandbox that forbids it), nothing says the path came back: the wait times out.
        _ = started
    }

    func stop() { source.stop() }
}
