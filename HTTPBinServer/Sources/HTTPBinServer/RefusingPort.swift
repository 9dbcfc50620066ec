#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP port that refuses connections, for as long as ``withRefusingPort(_:)`` runs.
///
/// The port is bound but never listened on, so a connection to it is reset at once, and no other
/// socket (another test's server, in a parallel run) can take it meanwhile, as it could a port a
/// stopped server has just given up.
public enum RefusingPort {
    /// Runs `body` with the port (on 127.0.0.1), then frees it.
    public static func withRefusingPort<T>(_ body: (_ port: Int) async throws -> T) async throws -> T {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw RefusingPortError(call: "socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw RefusingPortError(call: "bind") }
        return try await body(Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A system call ``RefusingPort`` needed failed.
public struct RefusingPortError: Error, CustomStringConvertible {
    /// The call that failed.
    public let call: String
    public var description: String { "\(call) failed (errno \(errno))" }
}
