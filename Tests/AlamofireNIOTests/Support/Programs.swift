import ChildProcess
import Foundation

/// `alamofire-probe`, built beside the tests.
let probeURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("alamofire-probe")

/// Runs a program to its end and returns its exit status and output (standard output, then error when `mergingErrors`).
/// One still running after `limit` seconds is ended, so a test fails instead of waiting forever;
/// one of this project's own programs, started `endingWithParent`, ends if the tests crash.
func runProgram(
    _ path: String, _ arguments: [String], limit: Int = 60, mergingErrors: Bool = true, endingWithParent: Bool = false
) async throws -> (
    status: Int32, output: String
) {
    let process = try ChildProcess(path, arguments, mergingErrors: mergingErrors, endingWithParent: endingWithParent)
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit)) { process.signal(SIGTERM) }
    let (output, termination) = await process.outputAndTermination()
    return (termination.status, String(decoding: output, as: UTF8.self))
}
