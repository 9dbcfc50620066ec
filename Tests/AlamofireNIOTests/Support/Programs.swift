import Foundation

/// `alamofire-probe`, built beside the tests.
let probeURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("alamofire-probe")

/// Runs a program to its end and returns its exit status and output (standard output, then error when `mergingErrors`).
/// One still running after `limit` seconds is ended, so a test fails instead of waiting forever.
func runProgram(
    _ path: String, _ arguments: [String], limit: Int = 60, mergingErrors: Bool = true
) async throws -> (
    status: Int32, output: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    if mergingErrors { process.standardError = output }
    try process.run()
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit)) { if process.isRunning { process.terminate() } }
    let data = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: output.fileHandleForReading.readDataToEndOfFile()) }
    }
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
