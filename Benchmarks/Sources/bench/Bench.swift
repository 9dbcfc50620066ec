import Foundation
import HTTPBinServer

// `swift run -c release bench [--quick] [--json PATH] [--client NAME] [--workload ID]`
// `swift run -c release bench --instructions [--client NAME] [--workload W1|W2|W1P|W9|W5]`
// `swift run -c release bench --profile W1 [--client NAME]` (`BENCH_KEEP_PROFILE=DIR` keeps the callgrind files of it and of `--instructions`)
// `swift run -c release bench --budget InstructionBudget.json [--record]`
// `swift run -c release bench --waterfall [--workload W1|W2|W9]` (see Waterfall.swift)
//
// Runs each workload through each client in turn (A B C A B C …, so drift hits all alike) and
// prints the median, min and max of the runs, with each client's ratio to AsyncHTTPClient. Bigger
// is better for every figure. W3, W4, W6, W7 and W8 run each client in a process of its own per
// run, so that the peak RSS reported is that client's alone.

struct Options {
    var quick = false
    var jsonPath: String?
    /// Only this client (for profiling one stack).
    var client: String?
    /// Only this workload.
    var workload: String?
    /// Set in a child process: run once and print the measurement as JSON.
    var child: ChildArguments?
    /// Count instructions and allocations per request under callgrind instead of timing (W1, W2, W1P, W9, W5).
    var instructions = false
    /// Print the top costs of this workload's requests under callgrind (AlamofireNIO unless `--client`).
    var profile: String?
    /// Check AlamofireNIO's counts against this instruction budget file (`--record`: write them into it).
    var budgetPath: String?
    var recordBudget = false
    /// Time each request's stages and the threads' CPU and waiting (W1, W2, W9).
    var waterfall = false

    struct ChildArguments {
        var base = ""
        /// nginx's HTTPS server, for a counted W9 run.
        var tlsBase: String?
        var slow = ""
        var scratch = ""
        var largeFilePath = ""
        var uploadPath = ""
        /// Make this many requests of W1, W2 or W1P untimed (a run under callgrind).
        var requests: Int?
    }

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func value(_ name: String) throws -> String {
            guard let value = iterator.next() else { throw BenchError.usage("\(name) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--json": jsonPath = try value(argument)
            case "--client": client = try value(argument)
            case "--workload": workload = try value(argument)
            case "--child": child = child ?? ChildArguments()
            case "--base": child?.base = try value(argument)
            case "--tls-base": child?.tlsBase = try value(argument)
            case "--slow": child?.slow = try value(argument)
            case "--scratch": child?.scratch = try value(argument)
            case "--large": child?.largeFilePath = try value(argument)
            case "--upload": child?.uploadPath = try value(argument)
            case "--requests": child?.requests = Int(try value(argument))
            case "--instructions": instructions = true
            case "--profile": profile = try value(argument)
            case "--budget": budgetPath = try value(argument)
            case "--record": recordBudget = true
            case "--waterfall": waterfall = true
            default: throw BenchError.usage("unknown argument \(argument)")
            }
        }
    }
}

enum BenchError: Error { case usage(String) }

func makeClient(_ name: String, for workload: Workload) -> any BenchClient {
    let connectionsPerHost = workload.connectionsPerHost
    return switch name {
    case "AlamofireNIO":
        AlamofireNIOClient(
            maximumConnectionsPerHost: connectionsPerHost, attachingPolicies: workload.attachesPolicies,
            protocolChoice: workload.protocolChoice)
    case "AsyncHTTPClient": AsyncHTTPClientClient(maximumConnectionsPerHost: connectionsPerHost, protocolChoice: workload.protocolChoice)
    default: URLSessionClient(maximumConnectionsPerHost: connectionsPerHost)
    }
}

/// One run's figures as a child process reports them.
struct ChildReport: Codable {
    var measurement: Measurement
    var peakRSSMB: Double?
}

struct Figure: Codable {
    var median: Double
    var min: Double
    var max: Double
    var unit: String
    /// Median peak resident memory of the client's process, for the workloads run in their own.
    var peakRSSMB: Double?
    /// Requests that failed, over all runs.
    var errors: Int?
    /// Median over the runs of each run's latency percentiles (W1).
    var p50Milliseconds: Double?
    var p99Milliseconds: Double?
    /// Median over the runs of the client's CPU seconds per 1,000 requests (W1, W2, W5, W1P).
    var cpuSecondsPer1000: Double?
}

func median(_ values: [Double]) -> Double? {
    values.isEmpty ? nil : values.sorted()[values.count / 2]
}

/// The benchmark's entry point. `main` is synchronous and services the main queue with a run loop
/// instead of `dispatch_main()`, which the async top-level code would call: valgrind 3.19 (Debian
/// 12's) crashes on `dispatch_main`'s `sigsuspend`, and the instruction counts run under it.
@main
enum Bench {
    static func main() {
        Task.detached {
            do {
                try await run(options: try Options(Array(CommandLine.arguments.dropFirst())))
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
                exit(1)
            }
        }
        while true { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
    }

    static func run(options: Options) async throws {
        let clientNames = allClients.filter { options.client == nil || $0 == options.client }
        if let child = options.child {
            try await runChild(child, options: options)
        } else if options.waterfall {
            try await Waterfall.run(options: options)
        } else if let budgetPath = options.budgetPath {
            try await runBudget(path: budgetPath, record: options.recordBudget)
        } else if options.instructions || options.profile != nil {
            try await runInstructionCounts(options: options, clientNames: clientNames)
        } else {
            if options.workload.map({ !$0.hasPrefix("W10") && $0 != CacheWorkloads.id }) ?? true {
                try await runTimed(options: options, clientNames: clientNames)
            }
            try await WebSocketWorkloads.runTimed(options: options)
            try await CacheWorkloads.runTimed(options: options)
        }
    }

    /// A child: one run of one workload through one client, reported on stdout.
    static func runChild(_ child: Options.ChildArguments, options: Options) async throws {
        guard let name = options.client, let workload = workloads(quick: options.quick).first(where: { $0.id == options.workload }) else {
            throw BenchError.usage("--child needs --client and --workload")
        }
        let client = makeClient(name, for: workload)
        let context = WorkloadContext(
            baseURL: URL(string: child.base)!, tlsBaseURL: child.tlsBase.flatMap(URL.init(string:)),
            slowURL: URL(string: child.slow) ?? URL(string: child.base)!,
            scratch: URL(fileURLWithPath: child.scratch), largeFilePath: child.largeFilePath, uploadPath: child.uploadPath,
            quick: options.quick)
        if let requests = child.requests {
            // A counted run under callgrind: the requests only, no report.
            let measurement =
                switch workload.id {
                case "W2": await concurrentGets(client, context, count: requests)
                case "W9": await concurrentGets(client, context, count: requests, inFlight: 100, overTLS: true)
                case "W5": try await decodedGets(client, context, count: requests)
                default: try await sequentialGets(client, context, count: requests)
                }
            // A count of failed requests would measure the wrong thing.
            guard measurement.errors == 0 else {
                throw UnexpectedResponse(description: "\(measurement.errors) of \(requests) requests failed in a counted run")
            }
            try? await client.shutdown()
            return
        }
        let measurement = try await workload.run(client, context)
        try? await client.shutdown()
        let report = ChildReport(measurement: measurement, peakRSSMB: peakResidentMegabytes())
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    /// Instruction counts: W1, W2, W1P, W9 and W5 (or the one asked for), against nginx, under callgrind.
    static func runInstructionCounts(options: Options, clientNames: [String]) async throws {
        let ids = options.profile.map { [$0] } ?? countedWorkloads.filter { options.workload == nil || $0 == options.workload }
        guard ids.allSatisfy(countedWorkloads.contains) else {
            throw BenchError.usage("instructions are counted for \(countedWorkloads.joined(separator: ", "))")
        }
        let server = try await BenchServer.start(quick: true, largeFiles: false, needsDocuments: true)
        do {
            let callgrind = try Callgrind()
            defer { callgrind.removeProgram() }
            try count(callgrind, ids: ids, server: server, options: options, clientNames: clientNames)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private static func count(_ callgrind: Callgrind, ids: [String], server: BenchServer, options: Options, clientNames: [String]) throws {
        let context = WorkloadContext(
            baseURL: server.baseURL, tlsBaseURL: server.tlsBaseURL, slowURL: server.baseURL, scratch: server.root, largeFilePath: "",
            uploadPath: "", quick: true)
        if let id = options.profile {
            try printProfile(callgrind, workload: id, client: options.client ?? "AlamofireNIO", context: context)
        } else {
            print("server: \(server.description); callgrind, per request: (instructions and allocations of runs of")
            print(
                "\(CountedRequests.counts(for: "W1").large) and \(CountedRequests.counts(for: "W1").small) requests, W2 "
                    + "\(CountedRequests.counts(for: "W2").large) and \(CountedRequests.counts(for: "W2").small), W9 "
                    + "\(CountedRequests.counts(for: "W9").large) and \(CountedRequests.counts(for: "W9").small), W5 "
                    + "\(CountedRequests.counts(for: "W5").large) and \(CountedRequests.counts(for: "W5").small), differenced)\n")
            var counts: [String: [String: InstructionCount]] = [:]
            for id in ids {
                print("\(id):")
                // URLSession cannot trust the HTTPS workloads' private CA (see BenchTLS).
                let clientNames = id == "W9" ? clientNames.filter { $0 != "URLSession" } : clientNames
                let baseline =
                    clientNames.contains("AsyncHTTPClient")
                    ? try countInstructions(callgrind, workload: id, client: "AsyncHTTPClient", context: context) : nil
                for name in clientNames {
                    let count =
                        name == "AsyncHTTPClient" && baseline != nil
                        ? baseline! : try countInstructions(callgrind, workload: id, client: name, context: context)
                    counts[id, default: [:]][name] = count
                    let ratio =
                        baseline.map { String(format: "%.2f×", Double(count.instructionsPerRequest) / Double($0.instructionsPerRequest)) }
                        ?? "n/a"
                    print(
                        String(
                            format: "  %@ %9ld instructions/request (%@ AsyncHTTPClient's)  %7.1f allocations/request",
                            name.padding(toLength: 16, withPad: " ", startingAt: 0) as NSString,
                            count.instructionsPerRequest, ratio as NSString, count.allocationsPerRequest))
                }
            }
            if let path = options.jsonPath {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(InstructionReport(server: server.description, instructions: counts)).write(
                    to: URL(fileURLWithPath: path))
                print("\nwrote \(path)")
            }
        }
    }

    /// The timed runs: each selected workload through each client, interleaved.
    static func runTimed(options: Options, clientNames: [String]) async throws {
        let selected = workloads(quick: options.quick).filter { options.workload == nil || $0.id == options.workload }
        let server = try await BenchServer.start(
            quick: options.quick, largeFiles: selected.contains { ["W3", "W4", "W7", "W8"].contains($0.id) },
            needsDocuments: selected.contains { ["W1", "W2", "W2T", "W5", "W1P", "W9"].contains($0.id) },
            needsDelay: selected.contains { $0.id == "W6" })
        // W6's /delay: nginx's when it has the echo module, else HTTPBinServer's.
        var slowServer: HTTPBinServer?
        let slowURL: URL
        if let delayBaseURL = server.delayBaseURL {
            slowURL = delayBaseURL
        } else {
            do {
                let started = try await HTTPBinServer.start()
                slowServer = started
                slowURL = started.baseURL
            } catch {
                await server.stop()
                throw error
            }
        }
        let context = WorkloadContext(
            baseURL: server.baseURL, tlsBaseURL: server.tlsBaseURL, slowURL: slowURL, scratch: server.root,
            largeFilePath: server.largeFilePath, uploadPath: server.uploadPath, quick: options.quick)
        let runs = options.quick ? 3 : 5
        print("server: \(server.description) at \(server.baseURL.absoluteString); \(runs) interleaved runs per workload\n")

        var results: [String: [String: Figure]] = [:]
        for workload in selected {
            // W1P is AlamofireNIO with policies attached; URLSession would only repeat its W1. Nor can
            // it trust the HTTPS workloads' private CA (see BenchTLS).
            let excludesURLSession = workload.attachesPolicies || workload.protocolChoice != .plain
            let clientNames = excludesURLSession ? clientNames.filter { $0 != "URLSession" } : clientNames
            var samples: [String: [Double]] = [:]
            var memory: [String: [Double]] = [:]
            var errors: [String: Int] = [:]
            var p50: [String: [Double]] = [:]
            var p99: [String: [Double]] = [:]
            var cpu: [String: [Double]] = [:]
            let clients = Dictionary(uniqueKeysWithValues: workload.isolated ? [] : clientNames.map { ($0, makeClient($0, for: workload)) })
            if !workload.isolated {
                // One untimed round warms connections, caches and code paths for every client.
                for name in clientNames { _ = try? await workload.run(clients[name]!, context) }
            }
            for _ in 0..<runs {
                for name in clientNames {
                    do {
                        let report =
                            workload.isolated
                            ? try await runInChildOffThePool(workload, client: name, context: context)
                            : ChildReport(measurement: try await workload.run(clients[name]!, context))
                        samples[name, default: []].append(report.measurement.value)
                        errors[name, default: 0] += report.measurement.errors
                        if let peak = report.peakRSSMB { memory[name, default: []].append(peak) }
                        if let value = report.measurement.p50Milliseconds { p50[name, default: []].append(value) }
                        if let value = report.measurement.p99Milliseconds { p99[name, default: []].append(value) }
                        if let value = report.measurement.cpuSecondsPer1000 { cpu[name, default: []].append(value) }
                    } catch {
                        print("  \(workload.id) \(name) failed: \(error)")
                    }
                }
            }
            for client in clients.values { try? await client.shutdown() }
            var figures: [String: Figure] = [:]
            for (name, values) in samples where !values.isEmpty {
                let sorted = values.sorted()
                figures[name] = Figure(
                    median: sorted[sorted.count / 2], min: sorted.first!, max: sorted.last!, unit: workload.unit,
                    peakRSSMB: memory[name].flatMap(median), errors: errors[name].flatMap { workload.countsErrors ? $0 : nil },
                    p50Milliseconds: p50[name].flatMap(median), p99Milliseconds: p99[name].flatMap(median),
                    cpuSecondsPer1000: cpu[name].flatMap(median))
            }
            results[workload.id] = figures
            print("\(workload.id): \(workload.title)")
            let baseline = figures["AsyncHTTPClient"]?.median
            for name in clientNames {
                guard let figure = figures[name] else { continue }
                let ratio = baseline.map { String(format: "%.2f×", figure.median / $0) } ?? "n/a"
                var line = String(
                    format: "  %@ %10.1f %@  (min %.1f, max %.1f)  %@ AsyncHTTPClient",
                    name.padding(toLength: 16, withPad: " ", startingAt: 0) as NSString, figure.median,
                    figure.unit as NSString,
                    figure.min, figure.max, ratio as NSString)
                if let p50 = figure.p50Milliseconds, let p99 = figure.p99Milliseconds {
                    line += String(format: "  p50 %.3f ms, p99 %.3f ms", p50, p99)
                }
                if let seconds = figure.cpuSecondsPer1000 { line += String(format: "  CPU %.3f s/1k req", seconds) }
                if let peak = figure.peakRSSMB { line += String(format: "  peak RSS %.0f MB", peak) }
                if let count = figure.errors { line += "  errors \(count)" }
                print(line)
            }
        }

        await server.stop()
        try? await slowServer?.shutdown()

        if let path = options.jsonPath {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(RunReport(server: server.description, workloads: results)).write(to: URL(fileURLWithPath: path))
            print("\nwrote \(path)")
        }
    }
}

let allClients = ["AlamofireNIO", "AsyncHTTPClient", "URLSession"]
let countedWorkloads = ["W1", "W2", "W1P", "W9", "W5"]

/// ``runInChild(_:client:context:)`` on a thread of its own: waiting for the child must not hold
/// one of the few threads of the shared pool, which the in-process HTTPBinServer (W6's) runs on.
func runInChildOffThePool(_ workload: Workload, client: String, context: WorkloadContext) async throws -> ChildReport {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try runInChild(workload, client: client, context: context) })
        }
    }
}

/// Runs one isolated run in a new process and reads its report.
func runInChild(_ workload: Workload, client: String, context: WorkloadContext) throws -> ChildReport {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var arguments = [
        "--child", "--workload", workload.id, "--client", client, "--base", context.baseURL.absoluteString, "--slow",
        context.slowURL.absoluteString, "--scratch", context.scratch.path, "--large", context.largeFilePath, "--upload", context.uploadPath,
    ]
    if context.quick { arguments.append("--quick") }
    process.arguments = arguments
    // Temporary files (URLSession's and ours) land beside the destination: a move, not a copy.
    process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": context.scratch.path]) { _, new in new }
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last else {
        throw UnexpectedResponse(description: "the child exited with \(process.terminationStatus)")
    }
    return try JSONDecoder().decode(ChildReport.self, from: Data(line.utf8))
}

/// What `--json` writes: the figures and what they were measured on.
struct RunReport: Encodable {
    let server: String
    let date = ISO8601DateFormatter().string(from: Date())
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let memoryGiB = Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30)
    /// The library's commit, when the benchmark runs from its git checkout.
    let commit = commandOutput("/usr/bin/git", ["rev-parse", "HEAD"])?.trimmingCharacters(in: .whitespacesAndNewlines)
    let workloads: [String: [String: Figure]]
}

/// What `--instructions --json` writes.
struct InstructionReport: Encodable {
    let server: String
    let date = ISO8601DateFormatter().string(from: Date())
    let commit = commandOutput("/usr/bin/git", ["rev-parse", "HEAD"])?.trimmingCharacters(in: .whitespacesAndNewlines)
    let valgrind = commandOutput("/usr/bin/valgrind", ["--version"])?.trimmingCharacters(in: .whitespacesAndNewlines)
    let instructions: [String: [String: InstructionCount]]
}

/// What a command prints, or nil when it cannot run or fails.
func commandOutput(_ path: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}
