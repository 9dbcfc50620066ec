import AFSynchronization
public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn`, its standard output (and, if asked, its standard error)
/// going to a pipe whose read end is ``output``; standard input is `/dev/null` (or a lifeline, with
/// `endingWithParent`). The tests' helper programs (`openssl`, the probes, the server) run through it.
///
/// Not Foundation's `Process`: on Linux its `run()` finds the highest open descriptor by copying
/// each `/proc/self/fd` entry's whole `d_name` out of `readdir`'s buffer, which reads past the end
/// of the last, shorter entry, and crashes when that crosses into an unmapped page (seen in the
/// test suite as a bad read in `memcpy` under `Process.run()`). Here the child closes every
/// descriptor above 2 with glibc's `posix_spawn_file_actions_addclosefrom_np`, starts with no
/// signal blocked (Dispatch's threads block most of them, and a child would inherit that, so
/// SIGTERM would not end it) and in a process group of its own, as with `Process`.
///
/// The program is reaped only under the lock that ``signal(_:)`` takes, so a signal never reaches
/// another process that was given the same id after this one ended.
///
/// A program outlives this process: if this process crashes, the program runs on, and keeps open any
/// of this process's descriptors it was given (its standard error, say, which `swift test` waits
/// on). Started `endingWithParent`, a program that calls ``Lifeline/endWithParent(program:)`` ends
/// as soon as this process does (see ``Lifeline``).
public final class ChildProcess: Sendable {
    /// How a program ended.
    public enum Termination: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The exit status, or the signal's number, as Foundation's `terminationStatus` gives them.
        public var status: Int32 {
            switch self {
            case .exited(let status), .signalled(let status): status
            }
        }
    }

    /// Why a program could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    public let processIdentifier: pid_t
    /// The read end of the pipe the program writes to.
    public let output: FileHandle
    /// The read end of the pipe the program's standard error goes to, when it has one of its own.
    public let errors: FileHandle?
    /// The write end of the program's lifeline, when it was started `endingWithParent`: never
    /// written, it closes when this object is released or this process ends.
    private let lifeline: Mutex<Int32?>
    /// How the program ended, once reaped: set only while holding the lock, as `signal` checks it.
    private let termination = Mutex<Termination?>(nil)

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - mergingErrors:   whether standard error goes to ``output`` too; else it is this process's
    ///     own, or ``errors`` with `capturingErrors`.
    ///   - capturingErrors: whether standard error goes to a pipe of its own, read from ``errors``
    ///     (only without `mergingErrors`, which takes precedence).
    ///   - endingWithParent: whether standard input is a lifeline instead of `/dev/null`: a pipe
    ///     this object holds open and never writes to, named in the program's environment, so a
    ///     program that calls ``Lifeline/endWithParent(program:)`` ends when this process ends or
    ///     ``releaseLifeline()`` is called.
    public init(
        _ executable: String, _ arguments: [String], mergingErrors: Bool = true, capturingErrors: Bool = false,
        endingWithParent: Bool = false
    ) throws {
        guard let pipe2 = GNUExtensions.pipe2, let closeFrom = GNUExtensions.closeFrom else {
            throw SpawnError(description: "glibc 2.34 or later is needed (pipe2, posix_spawn_file_actions_addclosefrom_np)")
        }
        // Every pipe is close-on-exec from the start: a program another thread starts meanwhile
        // inherits no end of it. Each end this process keeps is closed if starting fails.
        var kept: [Int32] = []
        var started = false
        defer { if !started { kept.forEach { close($0) } } }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard pipe2(&ends, O_CLOEXEC) == 0 else { throw SpawnError(description: "pipe2: errno \(errno)") }
            return (ends[0], ends[1])
        }
        let pipe = try makePipe()
        kept.append(pipe.read)
        defer { close(pipe.write) }
        let errorPipe = capturingErrors && !mergingErrors ? try makePipe() : nil
        if let errorPipe { kept.append(errorPipe.read) }
        defer { if let errorPipe { close(errorPipe.write) } }
        let lifelinePipe = endingWithParent ? try makePipe() : nil
        if let lifelinePipe { kept.append(lifelinePipe.write) }
        defer { if let lifelinePipe { close(lifelinePipe.read) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let lifelinePipe {
            posix_spawn_file_actions_adddup2(&actions, lifelinePipe.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, pipe.write, 1)
        if mergingErrors { posix_spawn_file_actions_adddup2(&actions, pipe.write, 2) }
        if let errorPipe { posix_spawn_file_actions_adddup2(&actions, errorPipe.write, 2) }
        guard closeFrom(&actions, 3) == 0 else {
            throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np failed")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaulted = sigset_t()
        sigemptyset(&defaulted)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaulted, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaulted)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result =
            if endingWithParent {
                Lifeline.withEnvironment { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            } else {
                posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
            }
        guard result == 0 else { throw SpawnError(description: "posix_spawn \(executable): errno \(result)") }
        started = true
        processIdentifier = pid
        output = FileHandle(fileDescriptor: pipe.read, closeOnDealloc: true)
        errors = errorPipe.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        lifeline = Mutex(lifelinePipe?.write)
    }

    deinit { releaseLifeline() }

    /// Closes the program's lifeline (see `endingWithParent`), as this process ending would: a
    /// program watching it ends. Does nothing for a program started without one.
    public func releaseLifeline() {
        let descriptor = lifeline.withLock { descriptor in
            defer { descriptor = nil }
            return descriptor
        }
        if let descriptor { close(descriptor) }
    }

    /// Everything the program writes until it closes its output, then how it ended. The blocking reads
    /// and wait run on a thread of their own: not the caller's, and not Dispatch's, whose pool has a
    /// thread per core and adds more only after about a second of them being blocked (seen as a
    /// second's stall per program when the tests run many at once).
    public func outputAndTermination() async -> (output: Data, termination: Termination) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let output = self.output.readDataToEndOfFile()
                continuation.resume(returning: (output, self.waitUntilExit()))
            }
        }
    }

    /// Everything the program writes to standard output and to ``errors`` (empty without it) until
    /// it closes them, then how it ended. The two pipes are read at once, so neither fills up.
    public func outputErrorsAndTermination() async -> (output: Data, errors: Data, termination: Termination) {
        async let errorData = withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread { continuation.resume(returning: self.errors?.readDataToEndOfFile() ?? Data()) }
        }
        let (output, termination) = await outputAndTermination()
        return (output, await errorData, termination)
    }

    /// Sends `signal` to the program, unless it has already been reaped.
    public func signal(_ signal: Int32) {
        termination.withLock { termination in
            if termination == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Whether the program is still running (one that has ended is reaped).
    public var isRunning: Bool {
        termination.withLock { termination in
            if termination == nil { termination = Self.reap(processIdentifier) }
            return termination == nil
        }
    }

    /// Waits for the program to end; every call returns the same answer.
    @discardableResult
    public func waitUntilExit() -> Termination {
        if let ended = termination.withLock({ $0 }) { return ended }
        // Waits for the end without reaping (WNOWAIT), so the id stays this program's until it is
        // reaped under the lock.
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        return termination.withLock { termination in
            if termination == nil { termination = Self.reap(processIdentifier) }
            return termination ?? .exited(-1)
        }
    }

    /// How `pid` ended, reaping it; nil while it runs.
    private static func reap(_ pid: pid_t) -> Termination? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == -1, errno == EINTR { continue }
            guard result == pid else { return nil }
            // WIFEXITED and its kin are macros Swift does not import: the same bits, spelled out.
            let signal = status & 0x7f
            return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        }
    }
}

/// glibc functions Swift's Glibc module does not declare (they are GNU extensions), looked up once.
private enum GNUExtensions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np`, glibc 2.34 and later.
    static let closeFrom: CloseFrom? = function("posix_spawn_file_actions_addclosefrom_np")
    static let pipe2: Pipe2? = function("pipe2")

    private static func function<Function>(_ name: String) -> Function? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: Function.self) }
    }
}
