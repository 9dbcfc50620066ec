import ChildProcess
import Foundation
import Testing

/// The tests' program runner: output, exit status, signals, and no inherited descriptors.
@Suite struct ChildProcessTests {
    /// Runs `script` with `/bin/sh` and returns its output and how it ended.
    private func shell(_ script: String, mergingErrors: Bool = true) async throws -> (output: String, termination: ChildProcess.Termination)
    {
        let (output, termination) = try await ChildProcess("/bin/sh", ["-c", script], mergingErrors: mergingErrors).outputAndTermination()
        return (String(decoding: output, as: UTF8.self), termination)
    }

    @Test func outputAndExitStatus() async throws {
        let merged = try await shell("echo out; echo err >&2; exit 3")
        #expect(merged.output == "out\nerr\n")
        #expect(merged.termination == .exited(3))
        #expect(merged.termination.status == 3)
        let apart = try await shell("echo out; exit 0", mergingErrors: false)
        #expect(apart.output == "out\n")
        #expect(apart.termination == .exited(0))
    }

    @Test func aSignalEndsItAndEveryWaitAgrees() throws {
        let process = try ChildProcess("/bin/sleep", ["30"])
        #expect(process.isRunning)
        process.signal(SIGKILL)
        #expect(process.waitUntilExit() == .signalled(SIGKILL))
        #expect(process.waitUntilExit() == .signalled(SIGKILL))
        #expect(!process.isRunning)
        // Signalling a program already waited for does nothing.
        process.signal(SIGKILL)
    }

    @Test func sigtermEndsAProgramStartedFromATask() async throws {
        // Dispatch's threads, where tasks run, block SIGTERM; the program must not inherit that.
        let process = try ChildProcess("/bin/sleep", ["30"])
        process.signal(SIGTERM)
        // Killed after 10 s if SIGTERM did not end it: the test then fails instead of waiting.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { process.signal(SIGKILL) }
        let ended = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: process.waitUntilExit()) }
        }
        #expect(ended == .signalled(SIGTERM))
    }

    @Test func theProgramInheritsNoOtherDescriptor() async throws {
        // A descriptor open in this process without close-on-exec.
        let descriptor = open("/dev/null", O_RDONLY)
        #expect(descriptor > 3)
        defer { close(descriptor) }
        let listed = try await shell("ls /proc/self/fd")
        let descriptors = Set(listed.output.split(separator: "\n").compactMap { Int32($0) })
        // Standard input, output and error, and the descriptor `ls` reads the directory through.
        #expect(descriptors.isSubset(of: [0, 1, 2, 3]))
        #expect(!descriptors.contains(descriptor))
        #expect(listed.termination == .exited(0))
    }

    @Test func aLifelineIsStandardInputNamedInTheEnvironment() async throws {
        let script = "echo \"${CHILD_PROCESS_LIFELINE:-none}\"; if test -p /dev/stdin; then echo pipe; else echo other; fi"
        let tied = try await ChildProcess("/bin/sh", ["-c", script], endingWithParent: true).outputAndTermination()
        #expect(String(decoding: tied.output, as: UTF8.self) == "stdin\npipe\n")
        #expect(tied.termination == .exited(0))
        let untied = try await shell(script)
        #expect(untied.output == "none\nother\n")
    }

    @Test func releasingTheLifelineEndsItsStandardInput() async throws {
        // `cat` copies its standard input until end-of-file: the lifeline's, once released.
        let process = try ChildProcess("/bin/cat", [], endingWithParent: true)
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { process.signal(SIGKILL) }
        #expect(process.isRunning)
        process.releaseLifeline()
        process.releaseLifeline()
        let (output, termination) = await process.outputAndTermination()
        #expect(output.isEmpty)
        #expect(termination == .exited(0))
    }

    @Test func oneProgramsLifelineReachesNoOtherProgram() async throws {
        // Were the first lifeline's write end inherited by the second program, releasing it would not end the first.
        let first = try ChildProcess("/bin/cat", [], endingWithParent: true)
        let second = try ChildProcess("/bin/cat", [], endingWithParent: true)
        for process in [first, second] { DispatchQueue.global().asyncAfter(deadline: .now() + 10) { process.signal(SIGKILL) } }
        first.releaseLifeline()
        #expect(await first.outputAndTermination().termination == .exited(0))
        #expect(second.isRunning)
        second.releaseLifeline()
        #expect(await second.outputAndTermination().termination == .exited(0))
    }

    @Test func aMissingProgramThrows() {
        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess("/nonexistent/program", []) }
    }
}
