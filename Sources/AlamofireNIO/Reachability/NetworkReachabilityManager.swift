import AFSynchronization
public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The `NetworkReachabilityManager` class listens for reachability changes of hosts and addresses for both cellular and
/// WiFi network interfaces.
///
/// Reachability can be used to determine background information about why a network operation failed, or to retry
/// network requests when a connection is established. It should not be used to prevent a user from initiating a network
/// request, as it's possible that an initial request may be required to establish reachability.
///
/// On Linux (where Alamofire has no reachability) the status comes from the kernel's routing table, read and then
/// followed through rtnetlink: the general status is reachable while a default route leaves through an interface that
/// is up and running; a host's while the route the kernel would pick for one of its addresses does. Changes are
/// delivered as the kernel announces them, not polled. Interfaces named `wwan*`, `rmnet*` or `ccmni*` (or raw-IP
/// links) count as cellular, every other one as Ethernet or Wi-Fi.
open class NetworkReachabilityManager: @unchecked Sendable {
    /// Defines the various states of network reachability.
    public enum NetworkReachabilityStatus: Equatable, Sendable {
        /// It is unknown whether the network is reachable.
        case unknown
        /// The network is not reachable.
        case notReachable
        /// The network is reachable on the associated `ConnectionType`.
        case reachable(ConnectionType)

        /// Defines the various connection types detected by reachability flags.
        public enum ConnectionType: Equatable, Sendable {
            /// The connection type is either over Ethernet or WiFi.
            case ethernetOrWiFi
            /// The connection type is a cellular connection.
            case cellular
        }

        init(_ link: RoutingTable.Link?) {
            guard let link else { self = .notReachable; return }
            self = .reachable(link.kind == .cellular ? .cellular : .ethernetOrWiFi)
        }
    }

    /// A closure executed when the network reachability status changes. The closure takes a single argument: the
    /// network reachability status.
    public typealias Listener = @Sendable (NetworkReachabilityStatus) -> Void

    /// Default `NetworkReachabilityManager` for the zero address and a `listenerQueue` of `.main`.
    public static let `default` = NetworkReachabilityManager()

    /// What is checked: the device's routing as a whole, or the way to one host.
    enum Target: Sendable, Equatable {
        case general
        case host(String)
    }

    // MARK: - Properties

    /// Whether the network is currently reachable.
    open var isReachable: Bool { isReachableOnCellular || isReachableOnEthernetOrWiFi }

    /// Whether the network is currently reachable over the cellular interface.
    ///
    /// - Note: Using this property to decide whether to make a high or low bandwidth request is not recommended.
    ///         Instead, set the `allowsCellularAccess` on any `URLRequest`s being issued.
    ///
    open var isReachableOnCellular: Bool { status == .reachable(.cellular) }

    /// Whether the network is currently reachable over Ethernet or WiFi interface.
    open var isReachableOnEthernetOrWiFi: Bool { status == .reachable(.ethernetOrWiFi) }

    /// `DispatchQueue` on which reachability will update.
    public let reachabilityQueue = DispatchQueue(label: "org.alamofire.reachabilityQueue")

    /// The current network reachability status: from the table followed while listening, else read from the kernel now.
    open var status: NetworkReachabilityStatus {
        if let table = mutableState.withLock({ $0.isListening ? $0.followed.whole : nil }) {
            return Self.status(of: target, in: table)
        }
        return source.snapshot().map { Self.status(of: target, in: $0) } ?? .unknown
    }

    struct MutableState {
        var listener: Listener?
        var listenerQueue: DispatchQueue?
        var previousStatus: NetworkReachabilityStatus?
        var isListening = false
        var followed = FollowedRoutingTable()
        /// Counts the starts: what a source started earlier delivers late is not applied to a later table.
        var generation = 0
    }

    let target: Target
    private let source: any RoutingMessageSource
    private let mutableState = Mutex(MutableState())
    /// Held while listening starts or stops, so that calls racing from several threads take effect one
    /// after the other: the source and the state always belong to the same call.
    private let listeningChange = Mutex(())

    // MARK: - Initialization

    /// Creates an instance with the specified host.
    ///
    /// - Note: The `host` value must *not* contain a scheme, just the hostname.
    ///
    /// - Parameters:
    ///   - host:          Host used to evaluate network reachability. Must *not* include the scheme (e.g. `https`).
    public convenience init?(host: String) {
        guard !host.isEmpty, !host.contains("://") else { return nil }
        self.init(target: .host(host), source: NetlinkSocket())
    }

    /// Creates an instance that monitors the address 0.0.0.0.
    ///
    /// Reachability treats the 0.0.0.0 address as a special token that causes it to monitor the general routing
    /// status of the device, both IPv4 and IPv6.
    public convenience init?() {
        self.init(target: .general, source: NetlinkSocket())
    }

    init(target: Target, source: any RoutingMessageSource) {
        self.target = target
        self.source = source
    }

    deinit {
        stopListening()
    }

    // MARK: - Listening

    /// Starts listening for changes in network reachability status.
    ///
    /// - Note: Stops and removes any existing listener.
    ///
    /// - Parameters:
    ///   - queue:    `DispatchQueue` on which to call the `listener` closure. `.main` by default.
    ///   - listener: `Listener` closure called when reachability changes.
    ///
    /// - Returns: `true` if listening was started successfully, `false` otherwise.
    @discardableResult
    @preconcurrency open func startListening(onQueue queue: DispatchQueue = .main, onUpdatePerforming listener: @escaping Listener) -> Bool
    {
        listeningChange.withLock { _ in
            stop()
            let generation = mutableState.withLock { state in
                state = MutableState(listener: listener, listenerQueue: queue, isListening: true, generation: state.generation + 1)
                return state.generation
            }
            let target = target
            let started = source.start(on: reachabilityQueue) { [weak self] event in
                self?.received(event, for: target, generation: generation)
            }
            if !started { mutableState.withLock { $0.isListening = false } }
            return started
        }
    }

    /// Stops listening for changes in network reachability status.
    open func stopListening() {
        listeningChange.withLock { _ in stop() }
    }

    private func stop() {
        source.stop()
        mutableState.withLock { state in
            state.listener = nil
            state.listenerQueue = nil
            state.previousStatus = nil
            state.isListening = false
        }
    }

    /// Applies what the source delivered on the reachability queue; once both dumps have ended, a status that
    /// changed goes to the listener.
    private func received(_ event: RoutingSourceEvent, for target: Target, generation: Int) {
        let table = mutableState.withLock { state -> RoutingTable? in
            guard state.isListening, state.generation == generation else { return nil }
            return state.followed.apply(event)
        }
        // A host's addresses are resolved outside the lock (it may ask DNS).
        guard let table else { return }
        let status = Self.status(of: target, in: table)
        mutableState.withLock { state in
            guard state.isListening, state.generation == generation, state.previousStatus != status else { return }
            state.previousStatus = status
            let listener = state.listener
            state.listenerQueue?.async { listener?(status) }
        }
    }

    // MARK: - Evaluating

    static func status(of target: Target, in table: RoutingTable) -> NetworkReachabilityStatus {
        switch target {
        case .general:
            return NetworkReachabilityStatus(table.defaultRouteInterface())
        case .host(let host):
            let link = addresses(of: host).lazy.compactMap { table.interface(towards: $0) }.first
            return NetworkReachabilityStatus(link)
        }
    }

    /// The IPv4 and IPv6 addresses of `host` (a literal, or a name the resolver knows), as bytes.
    static func addresses(of host: String) -> [[UInt8]] {
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(literal, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [[UInt8]] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            guard let address = entry.pointee.ai_addr else { continue }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { result.append(Array($0)) }
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { result.append(Array($0)) }
                }
            default:
                continue
            }
        }
        return result
    }
}
