import Foundation

// `swift run -c release bench [--quick] [--json PATH] [--client NAME] [--workload ID]`
//
// Runs each workload through each client in turn (A B C A B C …, so drift hits all alike) and
// prints the median, min and max of the runs, with each client's ratio to AsyncHTTPClient. Bigger
// is better for every figure.

struct Options {
    var quick = false
    var jsonPath: String?
    /// Only this client (for profiling one stack).
    var client: String?
    /// Only this workload.
    var workload: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--json":
                guard let path = iterator.next() else { throw BenchError.usage("--json needs a path") }
                jsonPath = path
            case "--client":
                guard let name = iterator.next() else { throw BenchError.usage("--client needs a name") }
                client = name
            case "--workload":
                guard let id = iterator.next() else { throw BenchError.usage("--workload needs an id") }
                workload = id
            default: throw BenchError.usage("unknown argument \(argument)")
            }
        }
    }
}

enum BenchError: Error { case usage(String) }

/// A workload: what it is, its unit, and how one run measures a client.
struct Workload {
    let id: String
    let title: String
    let unit: String
    let run: @Sendable (any BenchClient, URL) async throws -> Double
}

func workloads(quick: Bool) -> [Workload] {
    let sequential = quick ? 300 : 2000
    let concurrentTotal = quick ? 2000 : 20000
    let decodes = quick ? 300 : 2000
    return [
        Workload(id: "W1", title: "\(sequential) sequential GETs of 200 B JSON", unit: "req/s") { client, base in
            let url = base.appendingPathComponent(BenchServer.smallJSON)
            let start = ContinuousClock.now
            for _ in 0..<sequential { _ = try await client.data(url) }
            return Double(sequential) / seconds(start.duration(to: .now))
        },
        Workload(id: "W2", title: "\(concurrentTotal) GETs, 64 in flight", unit: "req/s") { client, base in
            let url = base.appendingPathComponent(BenchServer.smallJSON)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                var started = 0
                for _ in 0..<64 {
                    group.addTask { _ = try await client.data(url) }
                    started += 1
                }
                while try await group.next() != nil {
                    if started < concurrentTotal {
                        group.addTask { _ = try await client.data(url) }
                        started += 1
                    }
                }
            }
            return Double(concurrentTotal) / seconds(start.duration(to: .now))
        },
        Workload(id: "W5", title: "\(decodes) GETs of 50 KB JSON decoded into Codable", unit: "req/s") { client, base in
            let url = base.appendingPathComponent(BenchServer.itemsJSON)
            let start = ContinuousClock.now
            for _ in 0..<decodes {
                let items = try await client.decode([Item].self, url)
                guard items.count == 250 else { throw BenchError.usage("decoded \(items.count) items") }
            }
            return Double(decodes) / seconds(start.duration(to: .now))
        },
    ]
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

struct Figure: Codable {
    var median: Double
    var min: Double
    var max: Double
    var unit: String
}

let options = try Options(Array(CommandLine.arguments.dropFirst()))
let server = try await BenchServer.start()
let runs = options.quick ? 3 : 5
let clients: [any BenchClient] = [
    AlamofireNIOClient(maximumConnectionsPerHost: 64), AsyncHTTPClientClient(maximumConnectionsPerHost: 64),
    URLSessionClient(maximumConnectionsPerHost: 64),
].filter { options.client == nil || $0.name == options.client }
print("server: \(server.description) at \(server.baseURL.absoluteString); \(runs) interleaved runs per workload\n")

var results: [String: [String: Figure]] = [:]
for workload in workloads(quick: options.quick) where options.workload == nil || workload.id == options.workload {
    var samples: [String: [Double]] = [:]
    // One untimed round warms connections, caches and code paths for every client.
    for client in clients { _ = try? await workload.run(client, server.baseURL) }
    for _ in 0..<runs {
        for client in clients {
            do {
                samples[client.name, default: []].append(try await workload.run(client, server.baseURL))
            } catch {
                print("  \(workload.id) \(client.name) failed: \(error)")
            }
        }
    }
    var figures: [String: Figure] = [:]
    for (name, values) in samples where !values.isEmpty {
        let sorted = values.sorted()
        figures[name] = Figure(median: sorted[sorted.count / 2], min: sorted.first!, max: sorted.last!, unit: workload.unit)
    }
    results[workload.id] = figures
    print("\(workload.id): \(workload.title)")
    let baseline = figures["AsyncHTTPClient"]?.median
    for client in clients {
        guard let figure = figures[client.name] else { continue }
        let ratio = baseline.map { String(format: "%.2f×", figure.median / $0) } ?? "n/a"
        print(
            String(
                format: "  %-16@ %10.1f %@  (min %.1f, max %.1f)  %@ AsyncHTTPClient", client.name as NSString, figure.median,
                figure.unit as NSString, figure.min, figure.max, ratio as NSString))
    }
}

for client in clients { try? await client.shutdown() }
await server.stop()

if let path = options.jsonPath {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(["workloads": results]).write(to: URL(fileURLWithPath: path))
    print("\nwrote \(path)")
}
