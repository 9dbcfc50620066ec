import ChildProcess
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The directory the test bundle was built in, where `af` and `storesearch` are built too.
let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

/// What a tool printed and how it ended.
struct ToolRun: Sendable {
    let output: String
    let errors: String
    let status: Int32

    /// The standard output as JSON.
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "not a JSON object: \(output)")
    }
}

/// Runs a tool built beside the tests, with standard output and error apart. One still running
/// after `limit` seconds is ended, so a test fails instead of hanging.
func run(
    _ tool: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], limit: Int = 60
) async throws -> ToolRun {
    let path = buildDirectory.appendingPathComponent(tool).path
    let process: ChildProcess
    if directory != nil || !environment.isEmpty {
        // The tools save downloads in the working directory: start them through `sh -c 'cd …'`.
        let change = directory.map { "cd \(shellQuoted($0.path)) && " } ?? ""
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(shellQuoted($0.value)) " }.joined()
        let command = change + variables + "exec " + ([path] + arguments).map(shellQuoted).joined(separator: " ")
        process = try ChildProcess("/bin/sh", ["-c", command], mergingErrors: false, capturingErrors: true)
    } else {
        process = try ChildProcess(path, arguments, mergingErrors: false, capturingErrors: true)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit)) { process.signal(SIGTERM) }
    let (output, errors, termination) = await process.outputErrorsAndTermination()
    return ToolRun(
        output: String(decoding: output, as: UTF8.self), errors: String(decoding: errors, as: UTF8.self),
        status: exitStatus(termination))
}

/// Runs a tool with a pseudo-terminal for its standard input, output and error, through util-linux's
/// `script`; returns everything the terminal showed.
func runInTerminal(_ tool: String, _ arguments: [String], in directory: URL, limit: Int = 60) async throws -> ToolRun {
    let path = buildDirectory.appendingPathComponent(tool).path
    let command = "cd \(shellQuoted(directory.path)) && COLUMNS=80 exec \(([path] + arguments).map(shellQuoted).joined(separator: " "))"
    let process = try ChildProcess("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], mergingErrors: true)
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit)) { process.signal(SIGTERM) }
    let (output, termination) = await process.outputAndTermination()
    return ToolRun(output: String(decoding: output, as: UTF8.self), errors: "", status: exitStatus(termination))
}

/// The exit status as a shell reports it: a signal's number plus 128.
private func exitStatus(_ termination: ChildProcess.Termination) -> Int32 {
    switch termination {
    case .exited(let status): status
    case .signalled(let signal): 128 + signal
    }
}

func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// A fresh directory of its own for a test, removed by the caller.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tools-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}
