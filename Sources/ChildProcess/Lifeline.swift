import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program's tie to the process that started it, so it does not outlive a crash of that process.
///
/// A ``ChildProcess`` started `endingWithParent` gives the program, as its standard input, the read
/// end of a pipe it holds open and never writes to, and names it in the environment variable
/// ``environmentVariable``. The kernel closes the write end when the starting process ends, however
/// it ends, so the program reads end-of-file then. ``endWithParent(program:)`` watches for that.
///
/// This is what Linux's `PR_SET_PDEATHSIG` would do, were it not tied to the thread that started
/// the program rather than to its process: a program started from one of Dispatch's or the Swift
/// runtime's threads would be killed when that thread is retired.
public enum Lifeline {
    /// Names the lifeline for the program: its value is `stdin`.
    public static let environmentVariable = "CHILD_PROCESS_LIFELINE"

    /// When this program was started with a lifeline, ends it once the lifeline closes, with status
    /// 1 after a line on standard error saying why; otherwise does nothing. Call it first thing in
    /// `main`. It takes the variable out of this program's environment, so programs it starts do not
    /// take their standard input for a lifeline.
    /// - Parameter program: the name the line on standard error starts with.
    public static func endWithParent(program: String) {
        guard let value = getenv(environmentVariable), String(cString: value) == "stdin" else { return }
        unsetenv(environmentVariable)
        var status = stat()
        guard fstat(0, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return }
        let message = "\(program): the process that started this one has ended\n"
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let count = read(0, &byte, 1)
                if count > 0 { continue }
                if count < 0 {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN:
                        // Someone made the pipe non-blocking: wait until it is readable or hung up.
                        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                        _ = poll(&descriptor, 1, -1)
                        continue
                    default:
                        // Standard input closed or unusable in this program: no longer a lifeline.
                        return
                    }
                }
                // End-of-file: every write end is closed, so the parent is gone.
                message.withCString { _ = write(2, $0, strlen($0)) }
                _exit(1)
            }
        }
    }

    /// Runs `body` with this process's environment plus the lifeline's variable, as `posix_spawn`
    /// takes one.
    static func withEnvironment<Result>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result) -> Result {
        // The entries are copied byte for byte (a variable need not be UTF-8), all but an earlier
        // lifeline's; `environ` is nil after `clearenv`.
        let prefix = environmentVariable + "="
        var envp: [UnsafeMutablePointer<CChar>?] = []
        // Swift imports `environ` as never nil: its address is checked as a number.
        if var entry = UnsafeMutableRawPointer(bitPattern: Int(bitPattern: environ))?
            .assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)
        {
            while let pointer = entry.pointee {
                if strncmp(pointer, prefix, prefix.utf8.count) != 0 { envp.append(strdup(pointer)) }
                entry += 1
            }
        }
        envp.append(strdup(prefix + "stdin"))
        envp.append(nil)
        defer { envp.forEach { free($0) } }
        return envp.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
