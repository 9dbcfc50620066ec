import AFSynchronization
import AlamofireNIOLoading
import Foundation
import Synchronization
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `waitsForConnectivity`: the setting, the network-change count that ends a task's wait, and a real
/// wait in a network namespace of the probe's.
@Suite struct WaitsForConnectivityTests {
    @Test func theSettingTravelsWithTheConfigurationAndLeavesTheProxiesAlone() {
        let configuration = URLSessionConfiguration.af.default
        #expect(!configuration.waitsForConnectivity)
        configuration.waitsForConnectivity = true
        #expect(configuration.waitsForConnectivity)
        // URLSession copies its configuration: the copy keeps it, and the proxies still come from the environment.
        #expect(URLSession(configuration: configuration).configuration.waitsForConnectivity)
        #expect(ConfigurationExtras.proxyDictionary(of: configuration) == nil)
        configuration.waitsForConnectivity = false
        #expect(!configuration.waitsForConnectivity)
        #expect(configuration.connectionProxyDictionary == nil)
    }

    @Test func changesAreCountedFromTheFirstWholeTable() {
        var count = NetworkChangeCount()
        #expect(count.isOffline, "offline until the table is whole says otherwise")
        let events: [RoutingSourceEvent] = [
            // The first whole table counts: a task that failed before it may find its route there.
            .datagram(Netlink.dump(Netlink.link(2, "eth0", flags: 0x1))),
            .datagram(Netlink.link(2, "eth0")),
            // The same table again is no change.
            .datagram(Netlink.link(2, "eth0")),
            .datagram(Netlink.route(through: 2)),
            // Lost messages: nothing counts until the new dump is whole, and then only a difference does.
            .messagesLost,
            .datagram(Netlink.dump(Netlink.link(2, "eth0"), Netlink.route(through: 2))),
            .messagesLost,
            .datagram(Netlink.dump(Netlink.link(2, "eth0"))),
        ]
        var offline: [Bool] = []
        let changes = events.map { event in
            defer { offline.append(count.isOffline) }
            return count.apply(event)
        }
        #expect(changes == [true, true, false, true, false, false, false, true])
        // Lost messages keep the last whole table's answer until the new dump is whole.
        #expect(offline == [true, true, true, false, false, false, false, true])
        #expect(count.count == 4)
    }

    /// Waits end on a change after their count (at once when it has passed), on their cancel, or when the monitor
    /// stops (which closes its source); each once.
    @Test func aWaitEndsOnceOnAChangeItsCancelOrTheMonitorStopping() async throws {
        let source = InjectedRoutingSource(initial: Netlink.dump(Netlink.link(2, "eth0", flags: 0x1)))
        let monitor = try #require(NetworkChangeMonitor(source: source))
        let outcomes = AsyncStream.makeStream(of: (String, ConnectivityWaitOutcome).self)
        var heard = outcomes.stream.makeAsyncIterator()
        // Every wait for an outcome has a limit: one that never comes fails the test instead of hanging it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { outcomes.continuation.finish() }
        func wait(_ name: String, after count: Int) -> @Sendable () -> Void {
            monitor.waitForChange(after: count) { outcomes.continuation.yield((name, $0)) }
        }
        // The dump is change 1; a wait for a later one waits.
        _ = wait("first table", after: 0)
        var next = try #require(await heard.next())
        #expect(next.0 == "first table" && next.1 == .changed && monitor.changeCount == 1)
        _ = wait("changed", after: 1)
        let stop = wait("cancelled", after: 1)
        stop()
        stop()
        next = try #require(await heard.next())
        #expect(next.0 == "cancelled" && next.1 == .cancelled)
        source.inject(Netlink.link(2, "eth0"))
        next = try #require(await heard.next())
        #expect(next.0 == "changed" && next.1 == .changed && monitor.changeCount == 2)
        // The cancelled wait ended once: the next outcome is the stop's.
        _ = wait("stopped", after: 2)
        monitor.stop()
        next = try #require(await heard.next())
        #expect(next.0 == "stopped" && next.1 == .cancelled)
        #expect(!source.isStarted)
        _ = wait("after the stop", after: 2)
        next = try #require(await heard.next())
        #expect(next.0 == "after the stop" && next.1 == .cancelled)
    }

    /// The real thing, in a network namespace the probe makes (`unshare -rn`): a request waits with no route, the
    /// monitors hear it once, and it is answered once the namespace gets an interface with its address.
    @Test func aRequestWaitsForARouteInANetworkNamespace() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
        else {
            print("skipped: unshare and ip (util-linux, iproute2) are needed to make a network namespace")
            return
        }
        guard try await runProgram("/usr/bin/unshare", ["-rn", "true"]).status == 0 else {
            print("skipped: this process may not create a user and network namespace")
            return
        }
        let report = try await runProgram(
            "/usr/bin/unshare", ["-rn", "sh", "-c", "ip link set lo up && exec \"$0\" waits-for-connectivity", probeURL.path],
            endingWithParent: true)
        #expect(report.status == 0)
        let output = report.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard output != "skipped: no veth" else {
            print("skipped: this machine cannot make a veth pair in a network namespace")
            return
        }
        #expect(
            output
                == "answered=200 waits=1 timeout=-1001 waits=1 name=-1001 waits=1 cancelled=explicitlyCancelled waits=1 offline=-1009 waits=0"
        )
    }
}
