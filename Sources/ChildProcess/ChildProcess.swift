public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn`, its standard output (and, if asked, its standard error)
/// going to a pipe whose read end is ``output``; standard input is `/dev/null`. The tests' helper
/// programs (`openssl`, the probes, the server) run through it.
///
/// Not Foundation's `Process`: on Linux its `run()` finds the highest open descriptor by copying
/// each `/proc/self/fd` entry's whole `d_name` out of `readdir`'s buffer, which reads past the end
/// of the last, shorter entry, and crashes when that crosses into an unmapped page (seen in the
/// test suite as a bad read in `memcpy` under `Process.run()`). Here the child closes every
/// descriptor above 2 with glibc's `posix_spawn_file_actions_addclosefrom_np`.
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
    private let termination = Mutex<Termination?>(nil)
    private let waiting = Mutex(())

    /// Starts `executable` with `arguments`.
    /// - Parameter mergingErrors: whether standard error goes to ``output`` too; else it is this
    ///   process's own.
    public init(_ executable: String, _ arguments: [String], mergingErrors: Bool = true) throws {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw SpawnError(description: "pipe: errno \(errno)") }
        // Not inherited by programs started later (`pipe2` is not imported): the child gets the write
        // end as its standard output only.
        for descriptor in pipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        defer { close(pipe[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        if mergingErrors { posix_spawn_file_actions_adddup2(&actions, pipe[1], 2) }
        _ = Self.closeFrom?(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else {
            close(pipe[0])
            throw SpawnError(description: "posix_spawn \(executable): errno \(result)")
        }
        processIdentifier = pid
        output = FileHandle(fileDescriptor: pipe[0], closeOnDealloc: true)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare; without it the descriptors the parent opened with close-on-exec
    /// are still closed, the others inherited.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Sends `signal` to the program, unless it has already been waited for.
    public func signal(_ signal: Int32) {
        termination.withLock { termination in
            if termination == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Whether the program is still running (one that has ended is waited for).
    public var isRunning: Bool {
        termination.withLock { termination in
            if termination == nil { termination = Self.reap(processIdentifier, blocking: false) }
            return termination == nil
        }
    }

    /// Waits for the program to end; every call returns the same answer.
    @discardableResult
    public func waitUntilExit() -> Termination {
        // One waiter at a time: a second `waitpid` on the same child would find it already gone.
        waiting.withLock { _ in
            if let ended = termination.withLock({ $0 }) { return ended }
            let ended = Self.reap(processIdentifier, blocking: true)
            return termination.withLock { termination in
                // Nil: `isRunning` reaped it meanwhile and stored how it ended.
                if termination == nil { termination = ended ?? .exited(-1) }
                return termination ?? .exited(-1)
            }
        }
    }

    /// How `pid` ended; nil while it runs (unless `blocking`, which waits for it), or when it was
    /// already waited for.
    private static func reap(_ pid: pid_t, blocking: Bool) -> Termination? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == -1, errno == EINTR { continue }
            guard result == pid else { return nil }
            // WIFEXITED and its kin are macros Swift does not import: the same bits, spelled out.
            let signal = status & 0x7f
            return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        }
    }
}
