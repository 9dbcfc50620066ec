import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a reachability manager's rtnetlink messages come from: the kernel (``NetlinkSocket``), or a
/// test's hand-made ones.
protocol RoutingMessageSource: AnyObject, Sendable {
    /// Starts delivering datagrams of rtnetlink messages on `queue`: first a dump of the links and
    /// routes, then every change. False when it cannot start.
    func start(on queue: DispatchQueue, deliver: @escaping @Sendable ([UInt8]) -> Void) -> Bool
    /// Stops delivering; nothing is delivered after it returns on `queue`.
    func stop()
    /// The links and routes now, read at once (for `status` while not listening); nil if unavailable.
    func snapshot() -> RoutingTable?
}

/// A `NETLINK_ROUTE` socket subscribed to link, address and route changes, read by a Dispatch read
/// source when the kernel has something to say (no polling).
final class NetlinkSocket: RoutingMessageSource, @unchecked Sendable {
    // Unchecked: a Dispatch source may be used from any thread.
    private struct Listening: @unchecked Sendable {
        var descriptor: Int32
        var source: any DispatchSourceRead
        /// The dumps still to request, one at a time, after the one under way ends.
        var pendingDumps: [UInt16]
    }

    private let listening = Mutex<Listening?>(nil)

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

    /// One datagram, or nil when there is none (or on an error).
    private static func receive(on descriptor: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer.prefix(count)) : nil
    }

    func start(on queue: DispatchQueue, deliver: @escaping @Sendable ([UInt8]) -> Void) -> Bool {
        stop()
        let descriptor = Self.openSocket(groups: RTNetlink.groups, nonBlocking: true)
        guard descriptor >= 0 else { return false }
        // Links first, then routes: one dump at a time per socket. Changes meanwhile arrive among the
        // dumps' messages, in order, and the table applies them alike.
        guard Self.send(RTNetlink.dumpRequest(RTNetlink.getLink, sequence: 1), on: descriptor) else {
            close(descriptor)
            return false
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            while let datagram = Self.receive(on: descriptor) {
                deliver(datagram)
                if RTNetlink.parse(datagram).contains(.other(type: RTNetlink.messageDone)), let next = self?.nextDump() {
                    _ = Self.send(RTNetlink.dumpRequest(next, sequence: 2), on: descriptor)
                }
            }
        }
        source.setCancelHandler { close(descriptor) }
        listening.withLock { $0 = Listening(descriptor: descriptor, source: source, pendingDumps: [RTNetlink.getRoute]) }
        source.resume()
        return true
    }

    private func nextDump() -> UInt16? {
        listening.withLock { state -> UInt16? in
            guard let next = state?.pendingDumps.first else { return nil }
            state?.pendingDumps.removeFirst()
            return next
        }
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
                guard let datagram = Self.receive(on: descriptor) else { return nil }
                let messages = RTNetlink.parse(datagram)
                table.apply(messages)
                done = messages.contains(.other(type: RTNetlink.messageDone)) || messages.contains(.other(type: RTNetlink.messageError))
            }
        }
        return table
    }
}
