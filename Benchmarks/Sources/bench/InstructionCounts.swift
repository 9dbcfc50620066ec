import Foundation

// Instruction and allocation counts per request, from valgrind's callgrind: repeatable for a given
// binary whatever else the machine is doing, unlike wall-clock figures on a shared VM.
//
// Each count runs the workload's requests in a child process under callgrind twice, with a small
// and a large number of requests; the difference divided by the difference in requests is the cost
// of one request, with process start, connection set-up and shutdown cancelled out.

/// The requests each counted run makes: W1 (and W1P) one after another, W2 64 in flight, W9 100
/// in flight over HTTP/2.
enum CountedRequests {
    static func counts(for workload: String) -> (small: Int, large: Int) {
        switch workload {
        case "W2": (small: 640, large: 2560)
        case "W9": (small: 1000, large: 4000)
        case "W5": (small: 20, large: 120)
        default: (small: 100, large: 600)
        }
    }
}

/// What callgrind counted in one run: instructions executed and calls to the C allocator.
struct CallgrindTotals {
    var instructions: Int
    var allocations: Int

    /// Functions whose calls are heap allocations. Swift's runtime and Foundation both end in these.
    static let allocators: Set<String> = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"]

    /// Reads a callgrind output file: the `totals:` (or `summary:`) line, and the `calls=` lines
    /// under each `cfn=` naming an allocator (names are given once with their id, then by id alone).
    init(contentsOf url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var names: [Substring: Substring] = [:]
        var calleeIsAllocator = false
        var instructions: Int?
        var allocations = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("cfn=") {
                let name = Self.name(line.dropFirst(4), names: &names)
                calleeIsAllocator = Self.allocators.contains(String(name))
            } else if line.hasPrefix("fn=") {
                _ = Self.name(line.dropFirst(3), names: &names)
            } else if line.hasPrefix("calls=") {
                if calleeIsAllocator, let count = Int(line.dropFirst(6).prefix { $0 != " " }) { allocations += count }
                calleeIsAllocator = false
            } else if line.hasPrefix("totals:") || line.hasPrefix("summary:") {
                instructions = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
        }
        guard let instructions else { throw UnexpectedResponse(description: "no totals in \(url.path)") }
        self.instructions = instructions
        self.allocations = allocations
    }

    /// `(12) name` defines id 12; `(12)` refers to it.
    static func name(_ field: Substring, names: inout [Substring: Substring]) -> Substring {
        guard field.hasPrefix("("), let close = field.firstIndex(of: ")") else { return field }
        let id = field[field.startIndex...close]
        let rest = field[field.index(after: close)...].drop { $0 == " " }
        if rest.isEmpty { return names[id] ?? "" }
        names[id] = rest
        return rest
    }
}

/// Instructions and allocations per request for one client on one workload.
struct InstructionCount: Codable {
    var instructionsPerRequest: Int
    var allocationsPerRequest: Double
}

/// valgrind, and a copy of this program it can read.
struct Callgrind {
    let valgrind = "/usr/bin/valgrind"
    /// The benchmark without its DWARF 5 debug information, which Debian 12's valgrind (3.19)
    /// cannot read; the symbol table stays, so functions keep their names.
    let program: URL

    /// Installs valgrind (and binutils, for `strip`) from Debian when missing, as the benchmark
    /// does nginx, and makes the stripped copy.
    init() throws {
        let strip = "/usr/bin/strip"
        if !FileManager.default.fileExists(atPath: valgrind) || !FileManager.default.fileExists(atPath: strip) {
            installFromDebian(["valgrind", "binutils"])
        }
        guard FileManager.default.fileExists(atPath: valgrind), FileManager.default.fileExists(atPath: strip) else {
            throw BenchError.usage("valgrind could not be had (apt-get update and apt-get install valgrind binutils failed)")
        }
        // In the temporary directory, not tmpfs (which may be small or noexec), in a directory named
        // `release` as the original's is: Foundation names the program's data folder (where the
        // shared cookie storage lives) after it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alamofire-nio-bench-\(getpid())/release")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        program = directory.appendingPathComponent("bench")
        let original = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        guard runCommand(strip, ["--strip-debug", "-o", program.path, original]) == 0 else {
            throw BenchError.usage("strip --strip-debug failed on \(original)")
        }
    }

    /// Removes the stripped copy.
    func removeProgram() {
        try? FileManager.default.removeItem(at: program.deletingLastPathComponent().deletingLastPathComponent())
    }
}

/// Runs `requests` of `workload` through `client` in a child process under callgrind and returns
/// the output file.
func callgrindRun(_ callgrind: Callgrind, workload: String, client: String, requests: Int, context: WorkloadContext) throws -> URL {
    let output = context.scratch.appendingPathComponent("callgrind.\(client).\(workload).\(requests).out")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: callgrind.valgrind)
    process.arguments =
        [
            "--tool=callgrind", "--callgrind-out-file=\(output.path)", callgrind.program.path, "--child", "--workload", workload,
            "--client",
            client, "--requests", String(requests), "--base", context.baseURL.absoluteString,
        ] + (context.tlsBaseURL.map { ["--tls-base", $0.absoluteString] } ?? [])
    // The child trusts the CA that signed nginx's certificate (W9).
    process.environment = ProcessInfo.processInfo.environment.merging(
        [BenchTLS.authorityFileVariable: BenchTLS.authorityFile(in: context.scratch).path]) { _, new in new }
    process.standardError = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw UnexpectedResponse(description: "callgrind run of \(client) on \(workload) exited with \(process.terminationStatus)")
    }
    return output
}

/// Instructions and allocations per request, from a small and a large counted run.
func countInstructions(_ callgrind: Callgrind, workload: String, client: String, context: WorkloadContext) throws -> InstructionCount {
    let runs = try CountedRuns(callgrind, workload: workload, client: client, context: context)
    defer { runs.remove() }
    try runs.keepIfAsked()
    return try runs.perRequest()
}

/// A workload's small and large counted runs under callgrind: the difference between them is the
/// cost of the extra requests alone.
struct CountedRuns {
    let small: URL
    let large: URL
    let smallCount: Int
    let largeCount: Int

    init(_ callgrind: Callgrind, workload: String, client: String, context: WorkloadContext) throws {
        (smallCount, largeCount) = CountedRequests.counts(for: workload)
        small = try callgrindRun(callgrind, workload: workload, client: client, requests: smallCount, context: context)
        large = try callgrindRun(callgrind, workload: workload, client: client, requests: largeCount, context: context)
    }

    var extraRequests: Double { Double(largeCount - smallCount) }

    func perRequest() throws -> InstructionCount {
        let (before, after) = (try CallgrindTotals(contentsOf: small), try CallgrindTotals(contentsOf: large))
        return InstructionCount(
            instructionsPerRequest: Int((Double(after.instructions - before.instructions) / extraRequests).rounded()),
            allocationsPerRequest: (Double(after.allocations - before.allocations) / extraRequests * 10).rounded() / 10)
    }

    func remove() {
        for output in [small, large] { try? FileManager.default.removeItem(at: output) }
    }

    /// With `BENCH_KEEP_PROFILE=DIR` set, copies both runs' callgrind files there, for
    /// `callgrind_annotate --tree=caller`.
    func keepIfAsked() throws {
        guard let directory = ProcessInfo.processInfo.environment["BENCH_KEEP_PROFILE"] else { return }
        for run in [small, large] {
            let kept = URL(fileURLWithPath: directory).appendingPathComponent(run.lastPathComponent)
            try? FileManager.default.removeItem(at: kept)
            try FileManager.default.copyItem(at: run, to: kept)
        }
    }
}

/// Prints the functions with the highest inclusive and self costs per request of one client's
/// requests, demangled, so the next optimisation starts from data. Like the counts, it differences
/// a small and a large run function by function, so start-up and connection set-up drop out.
func printProfile(_ callgrind: Callgrind, workload: String, client: String, context: WorkloadContext, lines: Int = 45) throws {
    let runs = try CountedRuns(callgrind, workload: workload, client: client, context: context)
    defer { runs.remove() }
    try runs.keepIfAsked()
    let (smallRun, largeRun, extra) = (runs.small, runs.large, runs.extraRequests)
    let count = try runs.perRequest()
    print(
        "\(client) on \(workload), per request (runs of \(runs.largeCount) and \(runs.smallCount) requests differenced): "
            + "\(count.instructionsPerRequest) instructions, \(count.allocationsPerRequest) allocations")
    // AlamofireNIO's own modules, by their mangled prefixes.
    let ownModules = ["12AlamofireNIO", "19AlamofireNIOLoading", "21AlamofireNIOTransport"]
    let views: [(title: String, inclusive: Bool, ownOnly: Bool)] = [
        ("top inclusive costs per request (the function and all it calls)", true, false),
        ("top inclusive costs per request in AlamofireNIO's modules", true, true),
        ("top self costs per request", false, false),
        ("top self costs per request in AlamofireNIO's modules", false, true),
    ]
    for view in views where !view.ownOnly || client == "AlamofireNIO" {
        print("\n\(view.title):")
        let before = try annotatedCosts(smallRun, inclusive: view.inclusive)
        let after = try annotatedCosts(largeRun, inclusive: view.inclusive)
        let perRequest = after.filter { name, _ in !view.ownOnly || ownModules.contains { name.contains($0) } }
            .map { name, cost in (name: name, cost: Double(cost - (before[name] ?? 0)) / extra) }
            .filter { $0.cost > 0 }.sorted { $0.cost > $1.cost }.prefix(lines)
        let names = demangle(perRequest.map(\.name).joined(separator: "\n")).split(separator: "\n", omittingEmptySubsequences: false)
        for (row, name) in zip(perRequest, names) { print(String(format: "  %9.0f  ", row.cost) + String(name).prefix(200)) }
    }
    print("\nallocations per request by the function that made them, then by the nearest caller in AlamofireNIO's modules:")
    let (sitesBefore, sitesAfter) = (try AllocationSites(smallRun), try AllocationSites(largeRun))
    let direct = sitesAfter.direct.map { name, count in (name: name, count: Double(count - (sitesBefore.direct[name] ?? 0)) / extra) }
    let nearestBefore = sitesBefore.nearestCaller(in: ownModules)
    let nearest = sitesAfter.nearestCaller(in: ownModules).map { name, count in
        (name: "→ " + name, count: (count - (nearestBefore[name] ?? 0)) / extra)
    }
    let sites = [direct, nearest].flatMap { rows in rows.filter { $0.count >= 0.5 }.sorted { $0.count > $1.count }.prefix(lines) }
    let siteNames = demangle(sites.map(\.name).joined(separator: "\n")).split(separator: "\n", omittingEmptySubsequences: false)
    for (row, name) in zip(sites, siteNames) { print(String(format: "  %6.1f  ", row.count) + String(name).prefix(200)) }
}

/// Each function's cost in a callgrind output file, as `callgrind_annotate` sums it (rows look
/// like "12,345,678 (12.34%)  file:function [object]"), keyed by "file:function".
func annotatedCosts(_ output: URL, inclusive: Bool) throws -> [String: Int] {
    guard
        let annotated = commandOutput(
            "/usr/bin/callgrind_annotate", ["--inclusive=\(inclusive ? "yes" : "no")", "--threshold=100", "--auto=no", output.path])
    else { throw UnexpectedResponse(description: "callgrind_annotate failed on \(output.path)") }
    var costs: [String: Int] = [:]
    for row in annotated.split(separator: "\n") {
        let trimmed = row.drop { $0 == " " }
        guard trimmed.first?.isNumber == true, let percent = trimmed.range(of: "%)") else { continue }
        let cost = Int(trimmed.prefix { $0 != " " }.filter { $0 != "," })
        var name = trimmed[percent.upperBound...].drop { $0 == " " }
        // The object file in brackets differs between runs only by the scratch path.
        if let bracket = name.range(of: " [", options: .backwards) { name = name[..<bracket.lowerBound] }
        if let cost, !name.isEmpty, name != "PROGRAM TOTALS" { costs[String(name), default: 0] += cost }
    }
    return costs
}

/// Swift symbols made readable by `swift demangle --simplified`, when the toolchain has it.
func demangle(_ text: String) -> String {
    let candidates = ["/opt/swift/usr/bin/swift-demangle", "/usr/bin/swift-demangle"]
    guard let tool = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else { return text }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = ["--simplified"]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    guard (try? process.run()) != nil else { return text }
    // Written from another thread so a full output pipe cannot stall the write.
    let data = Data(text.utf8)
    Thread.detachNewThread {
        try? input.fileHandleForWriting.write(contentsOf: data)
        try? input.fileHandleForWriting.close()
    }
    let result = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: result, as: UTF8.self)
}
