import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking name resolution with getaddrinfo, run on NIO's thread pool by ``HappyEyeballsResolver``.
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
        return addresses
    }
}

/// NIO's Happy Eyeballs asks a `Resolver` for A and AAAA records separately; this one answers both
/// from a single getaddrinfo call on NIO's thread pool (as the system resolves, `/etc/hosts`
/// included), and notes when it returned, for the lookup's metrics. IP literals need no lookup.
/// Futures are on the connecting event loop, as NIO's connector requires.
final class HappyEyeballsResolver: Resolver, Sendable {
    private let eventLoop: any EventLoop
    private let lookup: @Sendable (String, Int) throws -> [SocketAddress]
    private let state = NIOLockedValueBox<(lookup: EventLoopFuture<[SocketAddress]>?, end: NIODeadline?)>((nil, nil))

    init(eventLoop: any EventLoop, lookup: @escaping @Sendable (String, Int) throws -> [SocketAddress]) {
        self.eventLoop = eventLoop
        self.lookup = lookup
    }

    /// When the lookup returned, if it has.
    var lookupEnd: NIODeadline? { state.withLockedValue { $0.end } }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        addresses(host: host, port: port).map { $0.filter { $0.protocol == .inet } }
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        addresses(host: host, port: port).map { $0.filter { $0.protocol == .inet6 } }
    }

    func cancelQueries() {}

    private func addresses(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        if let address = try? SocketAddress(ipAddress: host, port: port) {
            state.withLockedValue { $0.end = $0.end ?? .now() }
            return eventLoop.makeSucceededFuture([address])
        }
        let (future, isNew) = state.withLockedValue { state in
            if let lookup = state.lookup { return (lookup, false) }
            let lookup = self.lookup
            let future = NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                do {
                    return try lookup(host, port)
                } catch let error as TransportError {
                    throw error
                } catch {
                    throw TransportError(.cannotFindHost, "cannot resolve \(host)", underlyingError: error)
                }
            }
            state.lookup = future
            return (future, true)
        }
        // Outside the lock: a future that failed at once runs its callback here.
        if isNew { future.whenComplete { _ in self.state.withLockedValue { $0.end = .now() } } }
        return future
    }
}
