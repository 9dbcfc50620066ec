import AlamofireNIOTransport
import ChildProcess
import Foundation
import NIOCore
import NIOHTTP1

/// `transport-probe download URL` | `transport-probe upload URL BYTES` | `transport-probe upload-file URL PATH`
///
/// Moves one body through HTTPTransport without keeping it, then prints
/// `status=<code> bytes=<n> response=<body, for uploads> peak_rss_kb=<VmHWM>`. The tests run it as a
/// process of its own so that its peak memory is the transport's alone.
func peakResidentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

func run(_ arguments: [String]) async throws -> String {
    guard arguments.count >= 2, let url = URL(string: arguments[1]) else { throw ProbeError.usage }
    let transport = HTTPTransport()
    var request = TransportRequest(url: url)
    switch arguments[0] {
    case "download":
        break
    case "upload":
        guard arguments.count == 3, let count = Int64(arguments[2]) else { throw ProbeError.usage }
        request.method = .POST
        request.body = .stream(length: count) { writer in
            let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)
            var remaining = count
            while remaining > 0 {
                let size = Int(min(remaining, Int64(chunk.readableBytes)))
                try await writer.write(chunk.getSlice(at: 0, length: size)!)
                remaining -= Int64(size)
            }
        }
    case "upload-file":
        guard arguments.count == 3 else { throw ProbeError.usage }
        request.method = .PUT
        request.body = .file(URL(fileURLWithPath: arguments[2]))
    default:
        throw ProbeError.usage
    }
    let response = try await transport.execute(request)
    var received = 0
    var text = ""
    for try await chunk in response.body {
        received += chunk.readableBytes
        if arguments[0] != "download" { text += String(buffer: chunk) }
    }
    transport.shutdown()
    let compact = text.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: " ", with: "")
    return "status=\(response.head.status.code) bytes=\(received) response=\(compact) peak_rss_kb=\(peakResidentKilobytes())"
}

enum ProbeError: Error { case usage }

Lifeline.endWithParent(program: "transport-probe")
do {
    print(try await run(Array(CommandLine.arguments.dropFirst())))
} catch {
    FileHandle.standardError.write(Data("transport-probe: \(error)\n".utf8))
    exit(1)
}
