import AlamofireNIOLoading
import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking

extension URLSessionConfiguration {
    /// Whether a task that finds no route to the network (offline: `URLError(.notConnectedToInternet)`,
    /// or a host name that cannot be resolved while no default route leaves the machine) waits for one
    /// instead of failing, as on Apple platforms. `false` by default.
    ///
    /// A waiting task tells its session's delegate once (`urlSession(_:taskIsWaitingForConnectivity:)`,
    /// which the event monitors hear), then is sent again each time the kernel's links or routes change (followed through rtnetlink, as ``NetworkReachabilityManager`` follows them),
    /// until it connects, is cancelled, or `timeoutIntervalForResource` (counted from its resume) has
    /// passed: it then fails with `URLError(.timedOut)`. As on Apple platforms, only establishing a
    /// connection waits; a connection lost later fails the task. Where rtnetlink cannot be opened
    /// (a sandbox that forbids it), tasks fail offline at once.
    ///
    /// FoundationNetworking declares this property unavailable: AlamofireNIO's takes its place, and
    /// is kept as ``tlsMinimumSupportedProtocolVersion`` is, in the configuration's
    /// `connectionProxyDictionary`. Set it after assigning a whole `connectionProxyDictionary`.
    public var waitsForConnectivity: Bool {
        get { ConfigurationExtras.waitsForConnectivity(self) }
        set { ConfigurationExtras.set(newValue ? 1 : nil, for: .waitsForConnectivity, in: self) }
    }
}
#endif
