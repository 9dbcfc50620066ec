import AFSynchronization
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that accepts connections and never reads or writes on them: what a
/// client meets when a server hangs in its TLS handshake. Each accepted connection is reported on
/// ``accepted``, so a test can act once a client is connected instead of sleeping.
final class SilentListener: Sendable {
    let port: Int
    /// One element per accepted connection.
    let accepted: AsyncStream<Void>

    private let descriptor: Int32
    private let continuation: AsyncStream<Void>.Continuation
    private let connections = Mutex<[Int32]>([])

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SetupError(description: "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard listening else {
            let code = errno
            Glibc.close(descriptor)
            throw SetupError(description: "cannot listen on 127.0.0.1: errno \(code)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
        (accepted, continuation) = AsyncStream.makeStream(of: Void.self)
        Thread.detachNewThread { [self] in acceptUntilClosed() }
    }

    /// Accepts on a thread of its own until ``close()`` shuts the listener down.
    private func acceptUntilClosed() {
        while true {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                continuation.finish()
                return
            }
            connections.withLock { $0.append(connection) }
            continuation.yield()
        }
    }

    /// Stops listening and closes every accepted connection.
    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
        for connection in connections.withLock({ $0 }) { Glibc.close(connection) }
        continuation.finish()
    }
}
