import AFSynchronization
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a ``RoutingMessageSource`` delivers.
enum RoutingSourceEvent: Sendable, Equatable {
    /// A datagram of rtnetlink messages.
    case datagram([UInt8])
    /// Messages were lost (the socket's buffer overran): what was followed is stale, and a new dump of
    /// the links and routes follows.
    case messagesLost
}

/// Where a reachability manager's rtnetlink messages come from: the kernel (``NetlinkSocket``), or a
/// test's hand-made ones.
protocol RoutingMessageSource: AnyObject, Sendable {
    /// Starts delivering datagrams of rtnetlink messages on `queue`: first a dump of the links and
    /// routes, then every change (and, after lost messages, another dump). False when it cannot start.
    func start(on queue: DispatchQueue, deliver: @escaping @Sendable (RoutingSourceEvent) -> Void) -> Bool
    /// Stops delivering; nothing is delivered after it returns on `queue`.
    func stop()
    /// The links and routes now, read at once (for `status` while not listening); nil if unavailable.
    func snapshot() -> RoutingTable?
}

/// A `NETLINK_ROUTE` socket subscribed to link, address and route changes, read by a Dispatch read
/// source when the kernel has something to say (no polling).
///
/// Only the kernel's datagrams are delivered: another process may send to the socket's port, and what
/// it says is dropped. When the kernel reports that messages were lost (`ENOBUFS`, a buffer overrun
/// under a burst of changes), the socket says so and dumps the links and routes again, so the table
/// followed from it is rebuilt instead of staying wrong.
final class NetlinkSocket: RoutingMessageSource, @unchecked Sendable {
    // Unchecked: a Dispatch source may be used from any thread.
    private struct Listening: @unchecked Sendable {
        var descriptor: Int32
        var source: any DispatchSourceRead
        var deliver: @Sendable (RoutingSourceEvent) -> Void
        var queue: DispatchQueue
        /// The dumps still to request, one at a time, after the one under way ends.
        var pendingDumps: [UInt16]
        /// Whether a dump's messages are still arriving (a socket runs one dump at a time).
        var isDumping = true
        /// Whether messages were lost during a dump: a new dump starts once it ends.
        var needsResynchronizing = false
        var nextSequence: UInt32 = 3
    }

    private let listening = Mutex<Listening?>(nil)

    /// Counts the sockets this instance has open (for the tests): a replaced one closes on its queue.
    final class OpenSockets: Sendable {
        let count = Atomic<Int>(0)
    }

    let openSockets = OpenSockets()

    init() {}

    deinit { stop() }

    /// A bound `AF_NETLINK` socket (blocking unless `nonBlocking`), subscribed to `groups`; -1 if not allowed here.
    private static func openSocket(groups: UInt32, nonBlocking: Bool) -> Int32 {
        let netlinkRoute: Int32 = 0
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let descriptor = socket(AF_NETLINK, type, netlinkRoute)
        guard descriptor >= 0 else { return -1 }
        // struct sockaddr_nl: family (u16), pad (u16), pid (u32, 0: the kernel picks), groups (u32).
        var address = RTNetlink.bytes16(UInt16(AF_NETLINK)) + [0, 0] + RTNetlink.bytes32(0) + RTNetlink.bytes32(groups)
        let bound = address.withUnsafeMutableBytes { raw in
            bind(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    private static func send(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count
    }

    /// What one read of the socket gave.
    private enum Received {
        case datagram([UInt8])
        /// A datagram from another process than the kernel: dropped.
        case notFromTheKernel
        /// The kernel dropped messages: `ENOBUFS`.
        case overrun
        /// Nothing more to read now (or an error).
        case none
    }

    private static func receive(on descriptor: Int32) -> Received {
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        // struct sockaddr_nl: family (u16), pad (u16), pid (u32), groups (u32).
        var sender = [UInt8](repeating: 0, count: 12)
        var senderLength = socklen_t(sender.count)
        let count = buffer.withUnsafeMutableBytes { bytes in
            sender.withUnsafeMutableBytes { address in
                recvfrom(
                    descriptor, bytes.baseAddress, bytes.count, 0, address.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                    &senderLength)
            }
        }
        if count < 0 { return errno == ENOBUFS ? .overrun : .none }
        guard count > 0 else { return .none }
        // The kernel's port is 0; a process's is not.
        guard sender[4..<8].allSatisfy({ $0 == 0 }) else { return .notFromTheKernel }
        return .datagram(Array(buffer.prefix(count)))
    }

    func start(on queue: DispatchQueue, deliver: @escaping @Sendable (RoutingSourceEvent) -> Void) -> Bool {
        let descriptor = Self.openSocket(groups: RTNetlink.groups, nonBlocking: true)
        guard descriptor >= 0 else {
            stop()
            return false
        }
        let openSockets = openSockets
        openSockets.count.add(1, ordering: .relaxed)
        // Links first, then routes: one dump at a time per socket. Changes meanwhile arrive among the
        // dumps' messages, in order, and the table applies them alike.
        guard Self.send(RTNetlink.dumpRequest(RTNetlink.getLink, sequence: 1), on: descriptor) else {
            close(descriptor)
            openSockets.count.subtract(1, ordering: .relaxed)
            stop()
            return false
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            // A replaced or stopped socket says nothing more, even with datagrams still queued.
            while self?.isCurrent(descriptor) == true {
                switch Self.receive(on: descriptor) {
                case .datagram(let datagram):
                    deliver(.datagram(datagram))
                    if RTNetlink.dumpEnds(in: RTNetlink.parse(datagram)) > 0 { self?.dumpEnded(on: descriptor, deliver: deliver) }
                case .notFromTheKernel:
                    continue
                case .overrun:
                    self?.messagesLost(on: descriptor, deliver: deliver)
                case .none:
                    return
                }
            }
        }
        source.setCancelHandler {
            close(descriptor)
            openSockets.count.subtract(1, ordering: .relaxed)
        }
        // One swap: of two starts racing, the later one's socket stays and the other's is cancelled.
        let replaced = listening.withLock { state in
            defer {
                state = Listening(
                    descriptor: descriptor, source: source, deliver: deliver, queue: queue, pendingDumps: [RTNetlink.getRoute])
            }
            return state
        }
        replaced?.source.cancel()
        source.resume()
        return true
    }

    private func isCurrent(_ descriptor: Int32) -> Bool { listening.withLock { $0?.descriptor == descriptor } }

    /// After a dump's end: the next dump, if one waits (a new link dump first when messages were lost
    /// meanwhile, announced to the follower before its first message).
    private func dumpEnded(on descriptor: Int32, deliver: @Sendable (RoutingSourceEvent) -> Void) {
        let (resynchronizing, next) = listening.withLock { state -> (Bool, (UInt16, UInt32)?) in
            guard var current = state, current.descriptor == descriptor else { return (false, nil) }
            current.isDumping = false
            let resynchronizing = current.needsResynchronizing
            if resynchronizing {
                current.needsResynchronizing = false
                current.pendingDumps = [RTNetlink.getLink, RTNetlink.getRoute]
            }
            var next: (UInt16, UInt32)?
            if !current.pendingDumps.isEmpty {
                next = (current.pendingDumps.removeFirst(), current.nextSequence)
                current.nextSequence &+= 1
                current.isDumping = true
            }
            state = current
            return (resynchronizing, next)
        }
        if resynchronizing { deliver(.messagesLost) }
        if let (request, sequence) = next { _ = Self.send(RTNetlink.dumpRequest(request, sequence: sequence), on: descriptor) }
    }

    /// `ENOBUFS`: a new dump of the links and routes, now or once the dump under way has ended.
    private func messagesLost(on descriptor: Int32, deliver: @Sendable (RoutingSourceEvent) -> Void) {
        let dumping = listening.withLock { state -> Bool? in
            guard state?.descriptor == descriptor else { return nil }
            state?.needsResynchronizing = true
            return state?.isDumping
        }
        if dumping == false { dumpEnded(on: descriptor, deliver: deliver) }
    }

    /// What an `ENOBUFS` sets off, on demand: a new dump once any under way has ended, announced with
    /// `.messagesLost` (for the tests, which cannot make the kernel overrun the buffer at will).
    func resynchronize() {
        guard let (descriptor, deliver, queue) = listening.withLock({ state in state.map { ($0.descriptor, $0.deliver, $0.queue) } })
        else { return }
        queue.async { self.messagesLost(on: descriptor, deliver: deliver) }
    }

    /// The socket's netlink port, to which other processes may send; nil while not listening.
    var portID: UInt32? {
        guard let descriptor = listening.withLock({ $0?.descriptor }) else { return nil }
        var address = [UInt8](repeating: 0, count: 12)
        var length = socklen_t(address.count)
        let got = address.withUnsafeMutableBytes {
            getsockname(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard got == 0 else { return nil }
        return address[4..<8].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    func stop() {
        listening.withLock { state in
            defer { state = nil }
            return state
        }?.source.cancel()
    }

    func snapshot() -> RoutingTable? {
        let descriptor = Self.openSocket(groups: 0, nonBlocking: false)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A kernel that never answers must not hang the caller.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var table = RoutingTable()
        for (sequence, request) in [RTNetlink.getLink, RTNetlink.getRoute].enumerated() {
            guard Self.send(RTNetlink.dumpRequest(request, sequence: UInt32(sequence + 1)), on: descriptor) else { return nil }
            var done = false
            while !done {
                let datagram: [UInt8]
                switch Self.receive(on: descriptor) {
                case .datagram(let received): datagram = received
                case .notFromTheKernel: continue
                case .overrun, .none: return nil
                }
                let messages = RTNetlink.parse(datagram)
                table.apply(messages)
                done = RTNetlink.dumpEnds(in: messages) > 0
            }
        }
        return table
    }
}
