import AFSynchronization
import ChildProcess
import Foundation
import Glibc
import HTTPBinServer
import Synchronization

/// `openssl ocsp` running as a real OCSP responder on loopback, for the revocation tests.
///
/// It answers for certificates of the test CA from a CA database (`index.txt`) that lists some as
/// good and some as revoked; any other serial number, such as the `ocspUnknown` leaf's, is "unknown".
/// The leaves name the responder, so its port is chosen before the certificates are made:
///
/// ```swift
/// let port = try OCSPResponder.freePort()
/// let certificates = try TestCertificates.generate(ocspResponderURL: OCSPResponder.url(port: port))
/// let responder = try OCSPResponder.start(
///     certificates: certificates, good: [certificates.leaf(for: .ocspGood)],
///     revoked: [certificates.leaf(for: .ocspRevoked)], port: port)
/// defer { responder.stop() }
/// ```
final class OCSPResponder: Sendable {
    /// Why a responder did not start.
    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// How long `start` waits for openssl to accept connections.
    static let startTimeout: TimeInterval = 10

    /// The port the responder listens on.
    let port: Int
    /// Where the responder answers: `http://127.0.0.1:<port>/`.
    var url: URL { Self.url(port: port) }
    /// What openssl has written so far, standard output and error together (a line per request received).
    var output: String { log.text }

    private let process: ChildProcess
    private let directory: URL
    private let log: ProcessLog

    private init(port: Int, process: ChildProcess, directory: URL, log: ProcessLog) {
        self.port = port
        self.process = process
        self.directory = directory
        self.log = log
    }

    /// The URL of a responder on `port` of 127.0.0.1, to name in certificates before it starts.
    static func url(port: Int) -> URL {
        URL(string: "http://127.0.0.1:\(port)/")!
    }

    /// Starts `openssl ocsp` answering for `certificates`' CA, and returns once it accepts connections.
    /// - Parameters:
    ///   - certificates: the test CA signs the responses; its leaves are the ones asked about.
    ///   - good: the certificates the responder says are good.
    ///   - revoked: the certificates the responder says were revoked (a minute ago).
    ///   - port: the port to listen on, usually from ``freePort()``; 0 lets openssl pick one.
    /// - Throws: ``StartError`` when openssl exits or is not listening within ``startTimeout``.
    static func start(
        certificates: TestCertificates, good: [CertificateIdentity], revoked: [CertificateIdentity], port: Int
    ) throws -> OCSPResponder {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent("ocsp-responder-\(UUID().uuidString)")
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try writeDatabase(in: directory, certificates: certificates, good: good, revoked: revoked, now: Date())
            return try launch(in: directory, port: port)
        } catch {
            try? fileManager.removeItem(at: directory)
            throw error
        }
    }

    /// Ends openssl (the process this responder started), waits for it to exit and removes its files.
    func stop() {
        // `openssl ocsp` only notes SIGTERM and acts on it after its next request, so it is killed.
        process.signal(SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A TCP port of 127.0.0.1 that was free a moment ago: the kernel's choice for a socket bound to port 0,
    /// which is closed again.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw StartError(description: "socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw StartError(description: "bind() failed: errno \(errno)") }
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw StartError(description: "getsockname() failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Writes the CA's certificate and key and openssl's CA database: `index.txt` and `index.txt.attr`.
    ///
    /// A database line is TAB-separated: status (`V` valid, `R` revoked), expiry, revocation time (empty
    /// unless revoked), serial number, file name, subject. `openssl ocsp` looks rows up by serial number
    /// only, so the expiry (a month on, like the leaves') and the subject (`/CN=localhost`, like the
    /// leaves') are placeholders; `unique_subject = no` lets several rows share that subject.
    private static func writeDatabase(
        in directory: URL, certificates: TestCertificates, good: [CertificateIdentity], revoked: [CertificateIdentity], now: Date
    ) throws {
        let authority = certificates.certificateAuthority
        try Data(authority.certificatePEM.utf8).write(to: directory.appendingPathComponent("ca.pem"))
        try Data(authority.privateKeyPEM.utf8).write(to: directory.appendingPathComponent("ca.key"))
        let expiry = databaseTime(now + 30 * 24 * 3600)
        let revocation = databaseTime(now - 60)
        let rows =
            good.map { ["V", expiry, "", $0.serialNumberHex, "unknown", "/CN=localhost"] }
            + revoked.map { ["R", expiry, revocation, $0.serialNumberHex, "unknown", "/CN=localhost"] }
        let index = rows.map { $0.joined(separator: "\t") + "\n" }.joined()
        try Data(index.utf8).write(to: directory.appendingPathComponent("index.txt"))
        try Data("unique_subject = no\n".utf8).write(to: directory.appendingPathComponent("index.txt.attr"))
    }

    /// A moment as openssl's CA database writes it: `YYMMDDHHMMSSZ`, in UTC.
    private static func databaseTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }

    /// Runs `openssl ocsp` on the files in `directory` and waits until it accepts connections.
    private static func launch(in directory: URL, port: Int) throws -> OCSPResponder {
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let process = try ChildProcess(
            opensslPath,
            [
                "ocsp", "-index", file("index.txt"), "-CA", file("ca.pem"), "-rsigner", file("ca.pem"), "-rkey", file("ca.key"),
                "-port", String(port), "-ndays", "1",
            ])
        let log = ProcessLog(reading: process.output)

        let listening = log.wait(for: "waiting for OCSP client connections", timeout: startTimeout)
        // openssl prints `ACCEPT [::]:<port> PID=<pid>` once bound, before the line awaited above.
        let boundPort = port != 0 ? port : acceptedPort(in: log.text)
        guard listening, let boundPort else {
            let exited = !process.isRunning
            process.signal(SIGKILL)
            let termination = process.waitUntilExit()
            let reason =
                if listening {
                    "did not say which port it bound"
                } else if exited, case .exited(let status) = termination {
                    "exited with status \(status)"
                } else {
                    "was not listening within \(Int(startTimeout)) s"
                }
            throw StartError(description: "openssl ocsp \(reason); it wrote: \(log.text)")
        }
        return OCSPResponder(port: boundPort, process: process, directory: directory, log: log)
    }

    /// The port in openssl's `ACCEPT <address>:<port> PID=<pid>` line.
    private static func acceptedPort(in output: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
            let address = line.split(separator: " ").dropFirst().first,
            let port = address.split(separator: ":").last
        else { return nil }
        return Int(port)
    }

    /// openssl from `PATH`, or `/usr/bin/openssl`.
    private static var opensslPath: String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        let candidates = directories.map { "\($0)/openssl" } + ["/usr/bin/openssl"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/openssl"
    }
}

/// Everything a process writes to a pipe, read on a thread of its own from the moment it is made, so
/// the process never blocks on a full pipe and its output can be awaited.
private final class ProcessLog: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var ended = false
    }

    private let state = Mutex(State())
    /// Signalled after every read, and at the end of the output.
    private let changed = DispatchSemaphore(value: 0)

    /// The output so far.
    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Starts reading `handle` until its end, through a descriptor of its own, closed at the end.
    init(reading handle: FileHandle) {
        let descriptor = fcntl(handle.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else {
            state.withLock { $0.ended = true }
            return
        }
        Thread.detachNewThread { [self] in
            collect(from: descriptor)
        }
    }

    /// Waits until the output contains `text` or ends, for at most `timeout` seconds; true when it appeared.
    func wait(for text: String, timeout: TimeInterval) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while true {
            let (found, ended) = state.withLock { (String(decoding: $0.bytes, as: UTF8.self).contains(text), $0.ended) }
            if found { return true }
            if ended || changed.wait(timeout: deadline) == .timedOut { return self.text.contains(text) }
        }
    }

    private func collect(from descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            state.withLock { $0.bytes.append(contentsOf: buffer[..<count]) }
            changed.signal()
        }
        close(descriptor)
        state.withLock { $0.ended = true }
        changed.signal()
    }
}
