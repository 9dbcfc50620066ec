import Foundation

/// What a workload's run sees: the servers and the files it may use.
struct WorkloadContext: Sendable {
    /// nginx (or the fallback) serving the static documents and accepting PUTs under `/upload/`.
    let baseURL: URL
    /// nginx's HTTPS server with HTTP/2 (W9, W2T), serving the same documents; nil without nginx.
    var tlsBaseURL: URL? = nil
    /// HTTPBinServer, for the slow endpoint of W6.
    let slowURL: URL
    /// A directory on the same file system as the served files, for downloads and upload sources.
    let scratch: URL
    /// What W3 and W8 download.
    let largeFilePath: String
    /// Where W4 and W7 upload to: one path for both, so nginx stores one body at a time.
    let uploadPath: String
    let quick: Bool
}

/// A workload: what it is, its unit, and how one run measures a client.
struct Workload: Sendable {
    let id: String
    let title: String
    let unit: String
    /// Runs in a process of its own per client and run, so its peak RSS is that client's alone.
    let isolated: Bool
    /// Connections per host the clients are made with.
    let connectionsPerHost: Int
    /// AlamofireNIO's session gets a cookie storage and an event monitor (W1P).
    var attachesPolicies = false
    /// Plain HTTP/1.1, or HTTPS with or without HTTP/2.
    var protocolChoice = BenchProtocol.plain
    /// Whether failed requests are counted and reported rather than failing the run.
    var countsErrors: Bool { ["W2", "W2T", "W6", "W9"].contains(id) }
    let run: @Sendable (any BenchClient, WorkloadContext) async throws -> Measurement
}

/// One run's figure, with the errors it met (W2 and W6 count them instead of failing) and, for
/// W1, the latency percentiles of its requests.
struct Measurement: Codable, Sendable {
    var value: Double
    var errors = 0
    var p50Milliseconds: Double?
    var p99Milliseconds: Double?
    /// The client process's user and system CPU time per 1,000 requests (W1, W2, W5), server excluded.
    var cpuSecondsPer1000: Double?
}

enum Sizes {
    static func download(quick: Bool) -> Int { quick ? 256 << 20 : 1 << 30 }
    static func upload(quick: Bool) -> Int { quick ? 64 << 20 : 256 << 20 }
    static func slowRequests(quick: Bool) -> Int { quick ? 2000 : 10000 }
    /// W6's endpoint answers after this long.
    static let slowDelay = "0.5"
}

func workloads(quick: Bool) -> [Workload] {
    let sequential = quick ? 300 : 2000
    let concurrentTotal = quick ? 2000 : 20000
    let decodes = quick ? 300 : 2000
    return [
        Workload(id: "W1", title: "\(sequential) sequential GETs of 200 B JSON", unit: "req/s", isolated: false, connectionsPerHost: 64) {
            client, context in
            try await sequentialGets(client, context, count: sequential)
        },
        // W1 again, with AlamofireNIO's session carrying a cookie storage and an event monitor: policies
        // attached with little to do should cost little. Run right after W1, against AsyncHTTPClient only.
        Workload(
            id: "W1P", title: "W1 with a cookie storage and an event monitor on AlamofireNIO's session", unit: "req/s", isolated: false,
            connectionsPerHost: 64, attachesPolicies: true
        ) { client, context in
            try await sequentialGets(client, context, count: sequential)
        },
        Workload(id: "W2", title: "\(concurrentTotal) GETs, 64 in flight", unit: "req/s", isolated: false, connectionsPerHost: 64) {
            client, context in
            await concurrentGets(client, context, count: concurrentTotal)
        },
        // W2 over HTTPS with HTTP/1.1 forced, beside W9's HTTP/2: the two protocols on one server.
        Workload(
            id: "W2T", title: "\(concurrentTotal) GETs over HTTPS, HTTP/1.1 forced, 64 in flight", unit: "req/s", isolated: false,
            connectionsPerHost: 64, protocolChoice: .tlsHTTP1
        ) { client, context in
            await concurrentGets(client, context, count: concurrentTotal, overTLS: true)
        },
        Workload(
            id: "W3", title: "one \(Sizes.download(quick: quick) >> 20) MiB download streamed to a file", unit: "MB/s", isolated: true,
            connectionsPerHost: 64
        ) { client, context in
            let destination = context.scratch.appendingPathComponent("download-\(getpid()).bin")
            defer { try? FileManager.default.removeItem(at: destination) }
            let start = ContinuousClock.now
            try await client.download(context.baseURL.appendingPathComponent(context.largeFilePath), to: destination)
            let elapsed = seconds(start.duration(to: .now))
            let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int ?? 0
            guard size == Sizes.download(quick: context.quick) else { throw UnexpectedResponse(description: "downloaded \(size) bytes") }
            return Measurement(value: Double(size) / 1e6 / elapsed)
        },
        Workload(
            id: "W4", title: "\(Sizes.upload(quick: quick) >> 20) MiB upload from a file", unit: "MB/s", isolated: true,
            connectionsPerHost: 64
        ) { client, context in
            let source = context.scratch.appendingPathComponent(BenchServer.uploadSource)
            let start = ContinuousClock.now
            try await client.upload(source, to: context.baseURL.appendingPathComponent(context.uploadPath))
            return Measurement(value: Double(Sizes.upload(quick: context.quick)) / 1e6 / seconds(start.duration(to: .now)))
        },
        Workload(
            id: "W5", title: "\(decodes) GETs of 50 KB JSON decoded into Codable", unit: "req/s", isolated: false, connectionsPerHost: 64
        ) {
            client, context in
            try await decodedGets(client, context, count: decodes)
        },
        Workload(
            id: "W6", title: "\(Sizes.slowRequests(quick: quick)) requests in flight at once, \(Sizes.slowDelay) s each, 1000 connections",
            unit: "req/s", isolated: true, connectionsPerHost: 1000
        ) { client, context in
            let count = Sizes.slowRequests(quick: context.quick)
            let url = context.slowURL.appendingPathComponent("/delay/\(Sizes.slowDelay)")
            let start = ContinuousClock.now
            let errors = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask { (try? await client.data(url)).map { $0.isEmpty ? 1 : 0 } ?? 1 }
                }
                return await group.reduce(0, +)
            }
            return Measurement(value: Double(count) / seconds(start.duration(to: .now)), errors: errors)
        },
        Workload(
            id: "W7", title: "\(Sizes.upload(quick: quick) >> 20) MiB multipart upload from a file", unit: "MB/s", isolated: true,
            connectionsPerHost: 64
        ) { client, context in
            // W4's source, sent as the one part of a multipart form.
            let source = context.scratch.appendingPathComponent(BenchServer.uploadSource)
            let start = ContinuousClock.now
            try await client.multipartUpload(source, to: context.baseURL.appendingPathComponent(context.uploadPath))
            return Measurement(value: Double(Sizes.upload(quick: context.quick)) / 1e6 / seconds(start.duration(to: .now)))
        },
        Workload(
            id: "W8", title: "one \(Sizes.download(quick: quick) >> 20) MiB streamRequest consumed as Data chunks", unit: "MB/s",
            isolated: true, connectionsPerHost: 64
        ) { client, context in
            // W3's file, consumed in memory chunk by chunk instead of written to a file.
            let start = ContinuousClock.now
            let count = try await client.stream(context.baseURL.appendingPathComponent(context.largeFilePath))
            let elapsed = seconds(start.duration(to: .now))
            guard count == Sizes.download(quick: context.quick) else { throw UnexpectedResponse(description: "streamed \(count) bytes") }
            return Measurement(value: Double(count) / 1e6 / elapsed)
        },
        Workload(
            id: "W9", title: "\(concurrentTotal) GETs over HTTP/2 (HTTPS), 100 in flight", unit: "req/s", isolated: false,
            connectionsPerHost: 64, protocolChoice: .http2
        ) { client, context in
            await concurrentGets(client, context, count: concurrentTotal, inFlight: 100, overTLS: true)
        },
    ]
}

/// W1's loop: `count` GETs of the small document one after another, with each one's latency.
func sequentialGets(_ client: any BenchClient, _ context: WorkloadContext, count: Int) async throws -> Measurement {
    let url = context.baseURL.appendingPathComponent(BenchServer.smallJSON)
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    let cpuStart = processCPUSeconds()
    let start = ContinuousClock.now
    for _ in 0..<count {
        let requestStart = ContinuousClock.now
        let body = try await client.data(url)
        guard body.count == Documents.small.count else { throw UnexpectedResponse(description: "\(body.count) bytes") }
        latencies.append(seconds(requestStart.duration(to: .now)) * 1000)
    }
    let elapsed = seconds(start.duration(to: .now))
    latencies.sort()
    return Measurement(
        value: Double(count) / elapsed, p50Milliseconds: latencies[latencies.count / 2],
        p99Milliseconds: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
        cpuSecondsPer1000: (processCPUSeconds() - cpuStart) * 1000 / Double(count))
}

/// W5's load: `count` GETs of the 50 KB document, one after another, each decoded into `[Item]`.
func decodedGets(_ client: any BenchClient, _ context: WorkloadContext, count: Int) async throws -> Measurement {
    let url = context.baseURL.appendingPathComponent(BenchServer.itemsJSON)
    let cpuStart = processCPUSeconds()
    let start = ContinuousClock.now
    for _ in 0..<count {
        let items = try await client.decode([Item].self, url)
        guard items.count == 250 else { throw UnexpectedResponse(description: "decoded \(items.count) items") }
    }
    return Measurement(
        value: Double(count) / seconds(start.duration(to: .now)), cpuSecondsPer1000: (processCPUSeconds() - cpuStart) * 1000 / Double(count)
    )
}

/// W2's load: `count` GETs of the small document, 64 in flight; a failed request is counted and the run goes on.
func concurrentGets(
    _ client: any BenchClient, _ context: WorkloadContext, count: Int, inFlight: Int = 64, overTLS: Bool = false
) async -> Measurement {
    guard let base = overTLS ? context.tlsBaseURL : context.baseURL else { return Measurement(value: 0, errors: count) }
    let url = base.appendingPathComponent(BenchServer.smallJSON)
    let cpuStart = processCPUSeconds()
    let start = ContinuousClock.now
    let attempt: @Sendable () async -> Int = { (try? await client.data(url)).map { $0.count == Documents.small.count ? 0 : 1 } ?? 1 }
    let errors = await keepingInFlight(count: count, inFlight: inFlight, attempt).reduce(0, +)
    return Measurement(
        value: Double(count) / seconds(start.duration(to: .now)), errors: errors,
        cpuSecondsPer1000: (processCPUSeconds() - cpuStart) * 1000 / Double(count))
}

/// Runs `operation` `count` times, `inFlight` at a time (a new one starts as each ends), in a task
/// group; the results in the order the operations ended.
func keepingInFlight<Result: Sendable>(
    count: Int, inFlight: Int, _ operation: @escaping @Sendable () async -> Result
) async -> [Result] {
    await withTaskGroup(of: Result.self) { group in
        var started = 0
        while started < min(inFlight, count) {
            group.addTask(operation: operation)
            started += 1
        }
        var results: [Result] = []
        results.reserveCapacity(count)
        while let result = await group.next() {
            results.append(result)
            if started < count {
                group.addTask(operation: operation)
                started += 1
            }
        }
        return results
    }
}

/// User and system CPU time this process has used so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The process's peak resident set size in MB, from `/proc/self/status` (VmHWM).
func peakResidentMegabytes() -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first
    return kilobytes.map { $0 / 1024 }
}
