import AlamofireNIO
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `swift run -c release bench --waterfall [--workload W1|W2|W9]`
//
// Where each request's time goes: a timestamp at each stage of every request, for AlamofireNIO
// and AsyncHTTPClient side by side, with each stage's median and p99; then, per thread group of
// this process, the time on a CPU, waiting for one (the run queue) and asleep.
//
// AlamofireNIO's stages come from what a user can read (`DataResponse.metrics`, stamped by the
// transport on the event loop's clock and by the loading task) plus the caller's own stamps around
// `serializingData()`. AsyncHTTPClient's come from its delegate API (`HTTPClientResponseDelegate`,
// called on the event loop as its request bag moves through its phases). Their head stamps differ:
// AlamofireNIO's is taken as the head is handed to the pipeline, AsyncHTTPClient's once its write
// has completed.

/// One request's stage times, in seconds since the epoch (`Date`'s clock, which the metrics use).
struct StageStamps {
    /// AlamofireNIO: made, task start, fetch start, head written, request sent, first response byte,
    /// response complete, task end, awaited. AsyncHTTPClient: made, head sent, request sent, head
    /// received, finished, awaited.
    var times: [Double]
}

enum Waterfall {
    /// A stage of the comparison: the interval between two stamps of each client (nil: no such
    /// stage for that client).
    struct Row {
        let name: String
        let alamofire: (Int, Int)?
        let asyncHTTPClient: (Int, Int)?
    }

    static let rows: [Row] = [
        Row(name: "made → task created (API: root queue, URLRequest, task)", alamofire: (0, 1), asyncHTTPClient: nil),
        Row(name: "task created → transport called (loading layer)", alamofire: (1, 2), asyncHTTPClient: nil),
        Row(name: "transport called → head written (pool, event loop hop)", alamofire: (2, 3), asyncHTTPClient: nil),
        Row(name: "**made → head written**", alamofire: (0, 3), asyncHTTPClient: (0, 1)),
        Row(name: "head written → request sent", alamofire: (3, 4), asyncHTTPClient: (1, 2)),
        Row(name: "request sent → response head (server, network)", alamofire: (4, 5), asyncHTTPClient: (2, 3)),
        Row(name: "response head → response complete", alamofire: (5, 6), asyncHTTPClient: (3, 4)),
        Row(name: "response complete → task completed (loading layer)", alamofire: (6, 7), asyncHTTPClient: nil),
        Row(name: "task completed → awaited (root queue, serializer, resume)", alamofire: (7, 8), asyncHTTPClient: nil),
        Row(name: "**response complete → awaited**", alamofire: (6, 8), asyncHTTPClient: (4, 5)),
        Row(name: "**made → awaited**", alamofire: (0, 8), asyncHTTPClient: (0, 5)),
    ]

    static func run(options: Options) async throws {
        let ids = options.workload.map { [$0] } ?? ["W1", "W2", "W9"]
        guard ids.allSatisfy(["W1", "W2", "W9"].contains) else { throw BenchError.usage("--waterfall covers W1, W2 and W9") }
        let server = try await BenchServer.start(quick: true, largeFiles: false, needsDocuments: true)
        do {
            try await runWorkloads(ids, on: server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Each workload's waterfall and thread times, against `server`.
    private static func runWorkloads(_ ids: [String], on server: BenchServer) async throws {
        print("server: \(server.description); per-request stages in µs, median / p99, 2 interleaved rounds per client\n")
        for id in ids {
            guard let workload = workloads(quick: true).first(where: { $0.id == id }) else { continue }
            let base = id == "W9" ? server.tlsBaseURL : server.baseURL
            guard let url = base?.appendingPathComponent(BenchServer.smallJSON) else { continue }
            let (count, inFlight) = id == "W1" ? (3_000, 1) : (10_000, id == "W9" ? 100 : 64)
            let alamofire = makeClient("AlamofireNIO", for: workload) as! AlamofireNIOClient
            let asyncHTTPClient = makeClient("AsyncHTTPClient", for: workload) as! AsyncHTTPClientClient
            var stamps: [String: [StageStamps]] = [:]
            var threads: [String: ThreadTimes] = [:]
            // The clients are shut down whether the rounds end or fail.
            let failure: (any Error)?
            do {
                for round in 0..<3 {
                    for name in ["AlamofireNIO", "AsyncHTTPClient"] {
                        let stage: @Sendable () async throws -> StageStamps
                        if name == "AlamofireNIO" {
                            stage = { try await alamofire.stagedData(url) }
                        } else {
                            stage = { try await asyncHTTPClient.stagedData(url) }
                        }
                        let before = ThreadTimes.sample()
                        let measured = try await measure(count: round == 0 ? 500 : count, inFlight: inFlight, stage)
                        // The first round warms connections and code paths.
                        guard round > 0 else { continue }
                        stamps[name, default: []] += measured
                        threads[name, default: ThreadTimes()].add(ThreadTimes.sample().since(before))
                    }
                }
                failure = nil
            } catch {
                failure = error
            }
            try? await alamofire.shutdown()
            try? await asyncHTTPClient.shutdown()
            if let failure { throw failure }
            print("\(id): \(workload.title)\n")
            printStages(alamofire: stamps["AlamofireNIO"] ?? [], asyncHTTPClient: stamps["AsyncHTTPClient"] ?? [])
            print()
            for name in ["AlamofireNIO", "AsyncHTTPClient"] {
                threads[name]?.printTable(client: name, requests: stamps[name]?.count ?? 1)
            }
        }
    }

    /// `count` requests, `inFlight` at a time, each one's stamps. One at a time runs in the calling
    /// task, as W1's timed loop does: a task group would add a task's start and wake-up to each.
    static func measure(
        count: Int, inFlight: Int, _ stage: @escaping @Sendable () async throws -> StageStamps
    ) async throws -> [StageStamps] {
        if inFlight == 1 {
            var all: [StageStamps] = []
            all.reserveCapacity(count)
            for _ in 0..<count { all.append(try await stage()) }
            return all
        }
        let outcomes = await keepingInFlight(count: count, inFlight: inFlight) { () async -> Result<StageStamps, any Error> in
            do { return .success(try await stage()) } catch { return .failure(error) }
        }
        return try outcomes.map { try $0.get() }
    }

    static func printStages(alamofire: [StageStamps], asyncHTTPClient: [StageStamps]) {
        func figure(_ samples: [StageStamps], _ pair: (Int, Int)?) -> String {
            guard let (from, to) = pair, !samples.isEmpty else { return "—" }
            let values = samples.map { ($0.times[to] - $0.times[from]) * 1e6 }.sorted()
            return String(format: "%.1f / %.1f", values[values.count / 2], values[min(values.count - 1, values.count * 99 / 100)])
        }
        print("| stage | AlamofireNIO | AsyncHTTPClient |")
        print("|---|---:|---:|")
        for row in rows {
            print("| \(row.name) | \(figure(alamofire, row.alamofire)) | \(figure(asyncHTTPClient, row.asyncHTTPClient)) |")
        }
    }
}

extension AlamofireNIOClient {
    /// A GET whose stages are read from its metrics, between the caller's own two stamps.
    func stagedData(_ url: URL) async throws -> StageStamps {
        let made = Date().timeIntervalSince1970
        let response = await session.request(url).serializingData().response
        let awaited = Date().timeIntervalSince1970
        guard case .success(let body) = response.result, body.count == Documents.small.count,
            let metrics = response.metrics, let transaction = metrics.transactionMetrics.last
        else { throw UnexpectedResponse(description: "no body or no metrics") }
        let transport = [
            transaction.fetchStartDate, transaction.requestStartDate, transaction.requestEndDate, transaction.responseStartDate,
            transaction.responseEndDate,
        ]
        .map { $0?.timeIntervalSince1970 ?? .nan }
        return StageStamps(
            times: [made, metrics.taskInterval.start.timeIntervalSince1970] + transport + [
                metrics.taskInterval.end.timeIntervalSince1970, awaited,
            ])
    }
}

extension AsyncHTTPClientClient {
    /// A GET through the delegate API, stamped at each of its callbacks.
    func stagedData(_ url: URL) async throws -> StageStamps {
        let made = Date().timeIntervalSince1970
        let request = try HTTPClient.Request(url: url.absoluteString)
        let stamps = try await client.execute(request: request, delegate: StageRecorder()).futureResult.get()
        guard stamps.bytes == Documents.small.count else { throw UnexpectedResponse(description: "\(stamps.bytes) bytes") }
        return StageStamps(times: [made] + stamps.times + [Date().timeIntervalSince1970])
    }
}

/// Stamps AsyncHTTPClient's callbacks, which it calls on the request's event loop, one at a time.
final class StageRecorder: HTTPClientResponseDelegate {
    typealias Response = (times: [Double], bytes: Int)
    private let recorded = Mutex<Response>(([], 0))

    private func stamp() { recorded.withLock { $0.times.append(Date().timeIntervalSince1970) } }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) { stamp() }

    func didSendRequest(task: HTTPClient.Task<Response>) { stamp() }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        stamp()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        recorded.withLock { $0.bytes += buffer.readableBytes }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        stamp()
        return recorded.withLock { $0 }
    }
}
