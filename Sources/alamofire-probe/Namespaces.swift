import AlamofireNIO
import ChildProcess
import Foundation
import HTTPBinServer
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the probe does inside a network namespace of its own (run under `unshare -rn`, with `lo` up):
// it changes the namespace's interfaces and routes with `ip`, which touches nothing on the host.

/// `ip` failed: the namespace could not be set up as the probe needs.
struct NamespaceSetupFailed: Error {}

/// Runs `ip` with `arguments` and waits for it; throws when it fails.
func ip(_ arguments: String...) throws {
    guard try ChildProcess("/usr/sbin/ip", arguments, mergingErrors: false).waitUntilExit().status == 0 else {
        throw NamespaceSetupFailed()
    }
}

/// Inside a network namespace of its own (run under `unshare -rn`): follows the general reachability while it adds a
/// veth pair with a default route, then takes it down, and reports the statuses the listener heard.
func reachability() async throws -> String {
    guard let manager = NetworkReachabilityManager(), let host = NetworkReachabilityManager(host: "10.9.0.7") else {
        throw ProbeError.usage
    }
    let heard = AsyncStream.makeStream(of: NetworkReachabilityManager.NetworkReachabilityStatus.self)
    let queue = DispatchQueue(label: "probe.reachability")
    guard manager.startListening(onQueue: queue, onUpdatePerforming: { heard.continuation.yield($0) }) else {
        return "statuses=listening-failed"
    }
    func name(_ status: NetworkReachabilityManager.NetworkReachabilityStatus) -> String {
        switch status {
        case .unknown: "unknown"
        case .notReachable: "notReachable"
        case .reachable(.ethernetOrWiFi): "reachable(ethernetOrWiFi)"
        case .reachable(.cellular): "reachable(cellular)"
        }
    }
    var iterator = heard.stream.makeAsyncIterator()
    var statuses: [String] = []
    // A listener that never hears the change ends the probe, instead of hanging it.
    DispatchQueue.global().asyncAfter(deadline: .now() + 20) { heard.continuation.finish() }
    if let first = await iterator.next() { statuses.append(name(first)) }
    try ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
    try ip("addr", "add", "10.9.0.1/24", "dev", "v0")
    try ip("link", "set", "v1", "up")
    try ip("link", "set", "v0", "up")
    try ip("route", "add", "default", "via", "10.9.0.2", "dev", "v0")
    if let second = await iterator.next() { statuses.append(name(second)) }
    let hostStatus = host.status
    try ip("link", "set", "v0", "down")
    if let third = await iterator.next() { statuses.append(name(third)) }
    manager.stopListening()
    return "statuses=\(statuses.joined(separator: ",")) host=\(name(hostStatus)) after=\(name(host.status))"
}

/// A session whose configuration `waitsForConnectivity`, in a namespace where nothing but the loopback
/// is routed, asked for 10.9.1.1 (the test server listens on every address of the namespace):
/// - the request waits, its monitors hear `taskIsWaitingForConnectivity` once, and once the probe has
///   given a veth interface that address, it is answered;
/// - one asked for 10.9.2.1 with a 1 s resource timeout, nothing changing, fails with `.timedOut`, and
///   so does one for a name that cannot be resolved (no default route leaves the namespace);
/// - one cancelled while it waits fails as cancelled;
/// - without `waitsForConnectivity`, one fails at once with `.notConnectedToInternet`.
///
/// Prints `answered=<status> waits=<n> timeout=<code> waits=<n> name=<code> waits=<n> cancelled=<error> waits=<n>
/// offline=<code> waits=<n>`, or `skipped: no veth` when the namespace cannot have a veth pair.
func waitsForConnectivity() async throws -> String {
    var configuration = HTTPBinServer.Configuration()
    configuration.host = "0.0.0.0"
    // Ends with the probe, which exits once it has printed.
    let server = try await HTTPBinServer.start(configuration)
    let waits = AsyncStream.makeStream(of: Void.self)
    let heard = Mutex(0)
    let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "probe.connectivity"))
    monitor.taskIsWaitingForConnectivity = { _, _ in
        heard.withLock { $0 += 1 }
        waits.continuation.yield()
    }
    // A wait that never comes ends the probe, instead of hanging it.
    DispatchQueue.global().asyncAfter(deadline: .now() + 30) { waits.continuation.finish() }
    var heardWaiting = waits.stream.makeAsyncIterator()
    func session(waiting: Bool, resourceTimeout: TimeInterval = 30) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.waitsForConnectivity = waiting
        configuration.timeoutIntervalForResource = resourceTimeout
        return Session(configuration: configuration, eventMonitors: [monitor])
    }
    func taken() -> Int {
        heard.withLock { count in
            defer { count = 0 }; return count
        }
    }
    func code(_ error: AFError?) -> String {
        guard let error else { return "none" }
        if error.isExplicitlyCancelledError { return "explicitlyCancelled" }
        return (error.underlyingError as? URLError).map { "\($0.code.rawValue)" } ?? "\(error)"
    }

    let waiting = session(waiting: true)
    async let answered = waiting.request("http://10.9.1.1:\(server.port)/get").serializingData().response
    guard await heardWaiting.next() != nil else { return "answered=never-waited" }
    do {
        try ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
    } catch {
        return "skipped: no veth"
    }
    // Once the pair exists, a failure to set it up is the probe's failure, not a skip.
    try ip("addr", "add", "10.9.1.1/24", "dev", "v0")
    try ip("link", "set", "v1", "up")
    try ip("link", "set", "v0", "up")
    let answeredStatus = await answered.response?.statusCode ?? -1
    var report = "answered=\(answeredStatus) waits=\(taken())"

    // Each session is kept until its request ends: a released one finishes its requests at once.
    let shortLived = session(waiting: true, resourceTimeout: 1)
    let timeout = await shortLived.request("http://10.9.2.1:\(server.port)/get").serializingData().response
    // Its wait was heard (and counted) before it timed out: taken from the stream too.
    _ = await heardWaiting.next()
    report += " timeout=\(code(timeout.error)) waits=\(taken())"

    let name = await shortLived.request("http://offline.invalid:\(server.port)/get").serializingData().response
    _ = await heardWaiting.next()
    report += " name=\(code(name.error)) waits=\(taken())"

    let cancelled = waiting.request("http://10.9.2.1:\(server.port)/get")
    async let cancelledResponse = cancelled.serializingData().response
    guard await heardWaiting.next() != nil else { return report + " cancelled=never-waited" }
    cancelled.cancel()
    report += " cancelled=\(code(await cancelledResponse.error)) waits=\(taken())"

    let failing = session(waiting: false)
    let offline = await failing.request("http://10.9.2.1:\(server.port)/get").serializingData().response
    report += " offline=\(code(offline.error)) waits=\(taken())"
    return report
}
