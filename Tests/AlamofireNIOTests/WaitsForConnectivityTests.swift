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
        let events: [RoutingSourceEvent] = [
            // The dump is where counting starts.
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
        let changes = events.map { count.apply($0) }
        #expect(changes == [false, true, false, true, false, false, false, true])
        #expect(count.count == 3)
    }

    /// Waits ended by a change after their count (at once when it has passed), by the timer, or by a cancel; each once.
    @Test func aWaitEndsOnceOnAChangeItsTimerOrItsCancel() async throws {
        let source = InjectedRoutingSource(initial: Netlink.dump(Netlink.link(2, "eth0", flags: 0x1)))
        let scheduler = ManualScheduler()
        let monitor = try #require(NetworkChangeMonitor(source: source, scheduler: scheduler))
        let outcomes = AsyncStream.makeStream(of: (String, ConnectivityWaitOutcome).self)
        var heard = outcomes.stream.makeAsyncIterator()
        // Every wait for an outcome has a limit: one that never comes fails the test instead of hanging it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { outcomes.continuation.finish() }
        func wait(_ name: String, after count: Int, timeout: TimeInterval = 30) -> @Sendable () -> Void {
            monitor.waitForChange(after: count, timeout: timeout) { outcomes.continuation.yield((name, $0)) }
        }
        #expect(monitor.changeCount == 0)
        _ = wait("changed", after: 0)
        let stop = wait("cancelled", after: 0)
        _ = wait("timed out", after: 0, timeout: 5)
        _ = wait("no timer", after: 0, timeout: .infinity)
        // Three timers asked for, in order: the infinite timeout has none.
        let timers = [try await scheduler.next(), try await scheduler.next(), try await scheduler.next()]
        #expect(timers.map(\.delay) == [30, 30, 5])
        #expect(scheduler.pendingCount == 0)
        stop()
        stop()
        // The cancelled wait's timer was cancelled with it: firing it ends nothing more.
        timers[1].fire()
        var next = try #require(await heard.next())
        #expect(next.0 == "cancelled" && next.1 == .cancelled)
        timers[2].fire()
        next = try #require(await heard.next())
        #expect(next.0 == "timed out" && next.1 == .timedOut)
        source.inject(Netlink.link(2, "eth0"))
        var changed = [try #require(await heard.next()), try #require(await heard.next())]
        changed.sort { $0.0 < $1.0 }
        #expect(changed.map(\.0) == ["changed", "no timer"] && changed.allSatisfy { $0.1 == .changed })
        #expect(monitor.changeCount == 1)
        timers[0].fire()
        // A wait for a count already passed ends at once; the timers fired above ended nothing more.
        _ = wait("passed", after: 0)
        next = try #require(await heard.next())
        #expect(next.0 == "passed" && next.1 == .changed)
        outcomes.continuation.finish()
        #expect(await heard.next() == nil)
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
        #expect(
            report.output.trimmingCharacters(in: .whitespacesAndNewlines)
                == "answered=200 waits=1 timeout=-1001 waits=1 cancelled=explicitlyCancelled waits=1 offline=-1009 waits=0")
    }
}
