import AFSynchronization
import Foundation
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(Glibc)
import Glibc
#endif

/// Reachability survives what a netlink socket can do to it: lost messages, other processes writing to
/// its port, and listening started from several threads at once.
@Suite(.timeLimit(.minutes(1))) struct NetlinkResilienceTests {
    let online = Netlink.dump(Netlink.link(2, "eth0"), Netlink.route(through: 2))

    /// Whether this machine lets a process open a `NETLINK_ROUTE` socket (a sandbox may not).
    static let netlinkAllowed: Bool = {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }()

    @Test func lostMessagesMakeTheFollowedTableStartOver() {
        var followed = FollowedRoutingTable()
        #expect(followed.apply(.datagram(online))?.defaultRouteInterface()?.name == "eth0")
        // The route's deletion was among the lost messages: only a new dump can tell.
        #expect(followed.apply(.messagesLost) == nil)
        #expect(followed.whole == nil)
        #expect(followed.apply(.datagram(Netlink.link(2, "eth0") + Netlink.done)) == nil)
        #expect(followed.apply(.datagram(Netlink.done))?.defaultRouteInterface() == nil)
    }

    @Test func aListenerHearsTheStatusTheNewDumpGives() async throws {
        let source = InjectedRoutingSource(initial: online)
        let manager = NetworkReachabilityManager(target: .general, source: source)
        let heard = AsyncStream.makeStream(of: NetworkReachabilityManager.NetworkReachabilityStatus.self)
        #expect(manager.startListening(onQueue: DispatchQueue(label: "tests.resync")) { heard.continuation.yield($0) })
        var statuses = heard.stream.makeAsyncIterator()
        #expect(await statuses.next() == .reachable(.ethernetOrWiFi))
        source.inject(.messagesLost)
        source.inject(Netlink.dump(Netlink.link(2, "eth0")))
        #expect(await statuses.next() == .notReachable)
        manager.stopListening()
    }

    /// Starts racing from eight threads: before the swap, each replaced socket stayed open for good.
    @Test(.enabled(if: netlinkAllowed, "rtnetlink sockets are not allowed here"))
    func racingStartsLeaveOneSocketOpen() async throws {
        let socket = NetlinkSocket()
        let queue = DispatchQueue(label: "tests.netlink")
        let started = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if socket.start(on: queue, deliver: { _ in }) { started.withLock { $0 += 1 } }
        }
        #expect(started.withLock { $0 } == 8)
        try await Self.waitUntil { socket.openSockets.count.load(ordering: .relaxed) == 1 }
        socket.stop()
        try await Self.waitUntil { socket.openSockets.count.load(ordering: .relaxed) == 0 }
    }

    /// A process may send to the socket's port; only the kernel is listened to. The forged datagram is
    /// queued before the kernel's new dump is asked for, so it would be read before that dump ends.
    @Test(.enabled(if: netlinkAllowed, "rtnetlink sockets are not allowed here"))
    func datagramsFromOtherProcessesAreDropped() async throws {
        let socket = NetlinkSocket()
        let events = Mutex<[RoutingSourceEvent]>([])
        let dumpEnds = AsyncStream.makeStream(of: Void.self)
        let started = socket.start(on: DispatchQueue(label: "tests.netlink")) { event in
            events.withLock { $0.append(event) }
            if case .datagram(let bytes) = event, RTNetlink.parse(bytes).contains(.other(type: RTNetlink.messageDone)) {
                dumpEnds.continuation.yield()
            }
        }
        try #require(started)
        defer { socket.stop() }
        let forged = Netlink.link(99, "forged0")
        let (sent, before) = try await withTimeout { () async throws -> (Bool, Int) in
            var ends = dumpEnds.stream.makeAsyncIterator()
            // The first links and routes dumps.
            for _ in 0..<2 { await ends.next() }
            let before = events.withLock { $0.count }
            let port = try #require(socket.portID)
            let sent = Self.send(forged, toPort: port)
            socket.resynchronize()
            for _ in 0..<2 { await ends.next() }
            return (sent, before)
        }
        // Without CAP_NET_ADMIN the kernel refuses to carry the forgery at all: then only the resynchronisation is
        // checked (CI runs as root, where it is carried and must be dropped).
        if !sent { print("the kernel refused to send the forged datagram (an unprivileged process may not): nothing to drop") }
        let afterward = Array(events.withLock { $0 }.dropFirst(before))
        #expect(afterward.first == .messagesLost)
        #expect(afterward.count > 2)
        let heardTheForgery = events.withLock { $0.contains(.datagram(forged)) }
        #expect(!heardTheForgery)
    }

    /// Sends `datagram` from a netlink socket of this process to `port`.
    static func send(_ datagram: [UInt8], toPort port: UInt32) -> Bool {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = RTNetlink.bytes16(UInt16(AF_NETLINK)) + [0, 0] + RTNetlink.bytes32(port) + RTNetlink.bytes32(0)
        let sent = datagram.withUnsafeBytes { bytes in
            address.withUnsafeMutableBytes { raw in
                sendto(
                    descriptor, bytes.baseAddress, bytes.count, 0, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                    socklen_t(raw.count))
            }
        }
        return sent == datagram.count
    }

    /// Polls `condition` until it holds, failing after 10 s: a replaced socket closes on its queue,
    /// with nothing to await.
    static func waitUntil(_ condition: @escaping @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
