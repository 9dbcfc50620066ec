import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking name resolution with getaddrinfo, run on NIO's thread pool, so lookup time is measured
/// on its own and every address can be tried in order.
enum HostResolver {
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: gai_strerror(code)) }
    }

    static func addresses(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else { throw Failure(code: status) }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            if let address = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { addresses.append(SocketAddress($0.pointee, host: host)) }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        addresses.append(SocketAddress($0.pointee, host: host))
                    }
                default:
                    break
                }
            }
            next = info.pointee.ai_next
        }
        // IPv4 first: loopback servers in tests and most services listen there.
        return addresses.sorted { ($0.protocol == .inet ? 0 : 1) < ($1.protocol == .inet ? 0 : 1) }
    }
}
