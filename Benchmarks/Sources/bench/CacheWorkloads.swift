import AlamofireNIO
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W11: the response cache. 2,000 sequential GETs (300 with `--quick`) of distinct URLs, each a
/// fresh 200 B document (`Cache-Control: max-age=3600` from nginx), through AlamofireNIO only: no
/// other client here keeps a cache. One run times five passes over the same URLs:
/// - `network`: no `URLCache` (W1's path, for reference);
/// - `store in memory`: a `URLCache` without a disk, every answer from the network and stored;
/// - `store in memory and on disk`: the same with a `diskCapacity`, so every answer is also written
///   to the disk store (on the completion path);
/// - `from memory`: the first cache again, warm: every answer from memory;
/// - `from disk`: a new `URLCache` on the second's directory: its memory is empty, so every answer
///   is read from the disk store (and promoted to memory). The store's index is the process's, read
///   when the second pass began; a new process would list the directory once more.
///
/// Every answer's fetch type is checked: a pass whose answers did not come from where it says fails
/// the run. The disk store's directory is on the temporary directory's file system (not tmpfs when
/// `TMPDIR` is a disk), a new one for each run.
enum CacheWorkloads {
    static let id = "W11"

    static let passes = ["network", "store in memory", "store in memory and on disk", "from memory", "from disk"]

    static func session(cache: URLCache?) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = cache
        return Session(configuration: configuration, eventMonitors: [])
    }

    /// GETs `urls` one after another; fails unless each answer is the document, fetched as `expected`.
    static func pass(_ session: Session, _ urls: [URL], expected: TaskMetrics.ResourceFetchType) async throws -> Double {
        let start = ContinuousClock.now
        for url in urls {
            let response = await session.request(url).serializingData().response
            let fetchType = response.metrics?.transactionMetrics.last?.resourceFetchType
            guard response.data?.count == Documents.small.count, fetchType == expected else {
                throw UnexpectedResponse(
                    description:
                        "\(url): \(response.data?.count ?? 0) bytes, fetched as \(fetchType.map { "\($0)" } ?? "nil"), not \(expected)")
            }
        }
        return Double(urls.count) / seconds(start.duration(to: .now))
    }

    /// One run of the five passes: each one's requests per second, in the order of ``passes``.
    static func run(baseURL: URL, count: Int, directory: URL) async throws -> [Double] {
        // Distinct URLs, so that each disk read is one entry's (a repeated URL would be promoted to memory).
        let urls = (0..<count).map { URL(string: "\(baseURL.absoluteString)\(BenchServer.cachedPrefix)\(BenchServer.smallJSON)?n=\($0)")! }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let capacity = 64 << 20
        let memoryCache = URLCache(memoryCapacity: capacity, diskCapacity: 0, diskPath: nil)
        let memoryAndDisk = URLCache(memoryCapacity: capacity, diskCapacity: 4 * capacity, diskPath: directory.path)
        let memorySession = session(cache: memoryCache)
        var figures = [try await pass(session(cache: nil), urls, expected: .networkLoad)]
        figures.append(try await pass(memorySession, urls, expected: .networkLoad))
        figures.append(try await pass(session(cache: memoryAndDisk), urls, expected: .networkLoad))
        figures.append(try await pass(memorySession, urls, expected: .localCache))
        let fromDisk = URLCache(memoryCapacity: capacity, diskCapacity: 4 * capacity, diskPath: directory.path)
        figures.append(try await pass(session(cache: fromDisk), urls, expected: .localCache))
        return figures
    }

    /// Runs W11 (an untimed round first), prints each pass's median with its ratio to `from memory`.
    static func runTimed(options: Options) async throws {
        guard options.workload == nil || options.workload == id, options.client == nil || options.client == "AlamofireNIO" else { return }
        let server = try await BenchServer.start(quick: options.quick, largeFiles: false, needsDocuments: true)
        let count = options.quick ? 300 : 2000
        let runs = options.quick ? 3 : 5
        var samples: [[Double]] = Array(repeating: [], count: passes.count)
        // Each run's store has a directory of its own, all removed at the end: ext4 makes a file
        // slower to create when thousands were deleted in the last minute (it skips their inodes),
        // which would charge one run's clean-up to the next run's writes.
        let directories = FileManager.default.temporaryDirectory.appendingPathComponent("alamofire-nio-W11-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directories) }
        do {
            _ = try await run(baseURL: server.baseURL, count: 300, directory: directories.appendingPathComponent("warm-up"))
            for index in 0..<runs {
                let figures = try await run(
                    baseURL: server.baseURL, count: count, directory: directories.appendingPathComponent("\(index)"))
                for (pass, figure) in figures.enumerated() { samples[pass].append(figure) }
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        print("\(id): \(count) sequential GETs of distinct 200 B documents, AlamofireNIO's response cache (\(runs) runs)")
        let fromMemory = median(samples[3])
        for (name, values) in zip(passes, samples) {
            guard let value = median(values) else { continue }
            let ratio = fromMemory.map { String(format: "%.2f×", value / $0) } ?? "n/a"
            print(
                String(
                    format: "  %@ %10.1f req/s  (min %.1f, max %.1f)  %@ from memory",
                    name.padding(toLength: 30, withPad: " ", startingAt: 0) as NSString,
                    value, values.min()!, values.max()!, ratio as NSString))
        }
    }
}
