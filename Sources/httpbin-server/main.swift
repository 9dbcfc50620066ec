import ChildProcess
import Dispatch
import Foundation
import HTTPBinServer
import Logging

/// `httpbin-server [--host H] [--port N] [--tls] [--ca-file PATH] [--idle-timeout SECONDS] [--verbose]`
///
/// Serves httpbin's endpoints until SIGINT or SIGTERM. It prints one line per listener,
/// `<name> <url>`, the first being `http <url>`; with `--tls` it writes the test CA to `--ca-file`
/// (default: a file in the temporary directory) and prints `ca-file <path>`.
struct Options {
    var configuration = HTTPBinServer.Configuration(port: 8080)
    var caFile: String?

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var verbose = false
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--tls": options.configuration.tls = true
            case "--verbose": verbose = true
            case "--host":
                guard let host = iterator.next() else { return .failure(UsageError("--host needs an address")) }
                options.configuration.host = host
            case "--port":
                guard let port = iterator.next().flatMap(Int.init), (0...65535).contains(port) else {
                    return .failure(UsageError("--port needs a number from 0 to 65535"))
                }
                options.configuration.port = port
            case "--ca-file":
                guard let path = iterator.next() else { return .failure(UsageError("--ca-file needs a path")) }
                options.caFile = path
            case "--idle-timeout":
                guard let seconds = iterator.next().flatMap(Double.init), seconds > 0 else {
                    return .failure(UsageError("--idle-timeout needs a positive number of seconds"))
                }
                options.configuration.idleTimeout = .seconds(seconds)
            case "--help", "-h":
                return .failure(UsageError(""))
            default:
                return .failure(UsageError("unknown argument \(argument)"))
            }
        }
        if verbose {
            var logger = Logger(label: "httpbin-server")
            logger.logLevel = .info
            options.configuration.logger = logger
        }
        return .success(options)
    }
}

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Resolves when the process receives SIGINT or SIGTERM.
func waitForTermination() async {
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    let sources = [SIGINT, SIGTERM].map { signalNumber in
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { continuation.yield(signalNumber) }
        source.resume()
        return source
    }
    for await _ in stream { break }
    sources.forEach { $0.cancel() }
}

Lifeline.endWithParent(program: "httpbin-server")
let usage = "usage: httpbin-server [--host H] [--port N] [--tls] [--ca-file PATH] [--idle-timeout SECONDS] [--verbose]"
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let error):
    if !error.message.isEmpty { FileHandle.standardError.write(Data("httpbin-server: \(error.message)\n".utf8)) }
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(error.message.isEmpty ? 0 : 64)
case .success(let options):
    do {
        let server = try await HTTPBinServer.start(options.configuration)
        var lines = ["http \(server.baseURL.absoluteString)"]
        if let certificates = server.certificates {
            let path = options.caFile ?? FileManager.default.temporaryDirectory.appendingPathComponent("httpbin-ca-\(server.port).pem").path
            try certificates.certificateAuthority.certificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
            lines.append("ca-file \(path)")
            for variant in TLSVariant.allCases {
                if let url = server.tlsURL(variant) { lines.append("https-\(variant.rawValue) \(url.absoluteString)") }
            }
        }
        // One write, flushed at once, so a parent process reading the pipe sees every line together.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        await waitForTermination()
        try await server.shutdown()
    } catch {
        FileHandle.standardError.write(Data("httpbin-server: \(error)\n".utf8))
        exit(1)
    }
}
