import AlamofireNIOLoading
import ChildProcess
import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response cache's disk store through a `Session`: what one session (or process) stores in a
/// `URLCache`'s directory is served to the next, the `URLCache`'s removals reach it, and a process
/// killed mid-write leaves nothing that is served. Each test has a directory of its own.
@Suite struct DiskCacheTests {
    /// A fresh directory under the tests' temporary directory.
    static func makeDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("disk-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.path
    }

    /// The entry files in `directory`'s disk store.
    static func entryFiles(_ directory: String) -> [String] {
        let folder = URL(fileURLWithPath: directory).appendingPathComponent("AlamofireNIO").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".response") }
    }

    /// A session whose `URLCache` keeps its disk in `directory`, as a new process would make it.
    static func session(directory: String) -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, diskPath: directory)
        return Session(configuration: configuration, eventMonitors: [])
    }

    static func load(_ request: DataRequest) async throws -> AFDataResponse<Data> {
        try await withTimeout { await request.serializingData().response }
    }

    static func fetchType(_ response: AFDataResponse<Data>) -> TaskMetrics.ResourceFetchType? {
        response.metrics?.transactionMetrics.last?.resourceFetchType
    }

    @Test func aResponseStoredByOneSessionIsServedToASessionMadeLater() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await HTTPBinServer.withServer { server async throws in
            let firstSession = Self.session(directory: directory)
            let first = try await Self.load(firstSession.request(server.url("/cache/60")))
            // A new URLCache on the same directory: its memory is empty, its disk is not.
            let secondSession = Self.session(directory: directory)
            let second = try await Self.load(secondSession.request(server.url("/cache/60")))
            withExtendedLifetime((firstSession, secondSession)) {}
            #expect(Self.fetchType(first) == .networkLoad)
            #expect(Self.fetchType(second) == .localCache)
            #expect(second.response?.statusCode == 200 && second.data == first.data && first.data?.isEmpty == false)
            #expect(second.response?.value(forHTTPHeaderField: "Cache-Control") == "public, max-age=60")
            #expect(server.statistics.totalRequests == 1)
            // Kept in memory as well, not in FoundationNetworking's own disk store: its only files
            // there are the disk store's two markers.
            let foundationFiles = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
                $0.hasSuffix(".storedcachedurlresponse")
            }
            #expect(
                foundationFiles.sorted() == ["0.AlamofireNIO.storedcachedurlresponse", "63113904000.AlamofireNIO.storedcachedurlresponse"])
        }
    }

    @Test func removeAllCachedResponsesEmptiesTheDiskStore() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await HTTPBinServer.withServer { server async throws in
            let firstSession = Self.session(directory: directory)
            _ = try await Self.load(firstSession.request(server.url("/cache/60")))
            let session = Self.session(directory: directory)
            session.sessionConfiguration.urlCache?.removeAllCachedResponses()
            let again = try await Self.load(session.request(server.url("/cache/60")))
            withExtendedLifetime((firstSession, session)) {}
            #expect(Self.fetchType(again) == .networkLoad)
            #expect(server.statistics.totalRequests == 2)
        }
    }

    /// A response that may be kept in memory only (as a `CachedResponseHandler` can decide) never
    /// reaches the disk.
    @Test func anEntryAllowedInMemoryOnlyIsNotWrittenToDisk() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, diskPath: directory)
            let memoryOnly = ResponseCacher(
                behavior: .modify { _, response in
                    CachedURLResponse(
                        response: response.response, data: response.data, userInfo: response.userInfo,
                        storagePolicy: .allowedInMemoryOnly)
                })
            let session = Session(configuration: configuration, cachedResponseHandler: memoryOnly, eventMonitors: [])
            let first = try await Self.load(session.request(server.url("/cache/60")))
            let fromMemory = try await Self.load(session.request(server.url("/cache/60")))
            let filesBeforeLater = Self.entryFiles(directory)
            let laterSession = Self.session(directory: directory)
            let later = try await Self.load(laterSession.request(server.url("/cache/60")))
            withExtendedLifetime((session, laterSession)) {}
            #expect(Self.fetchType(first) == .networkLoad)
            #expect(Self.fetchType(fromMemory) == .localCache)
            #expect(Self.fetchType(later) == .networkLoad)
            #expect(server.statistics.totalRequests == 2)
            #expect(filesBeforeLater.isEmpty)
            #expect(Self.entryFiles(directory).count == 1)  // the later session's, allowed on disk
        }
    }

    /// An entry whose `Vary` names a credential header keeps the request's credential among its
    /// values: it is kept in memory only, never on disk.
    @Test func anEntryVaryingOnACredentialIsNotWrittenToDisk() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session(directory: directory)
            let url = server.url("/response-headers?Cache-Control=max-age%3D60&Vary=Authorization")
            let headers: HTTPHeaders = [.authorization(bearerToken: "secret-token")]
            let first = try await Self.load(session.request(url, headers: headers))
            let fromMemory = try await Self.load(session.request(url, headers: headers))
            withExtendedLifetime(session) {}
            #expect(first.response?.value(forHTTPHeaderField: "Vary") == "Authorization")
            #expect(Self.fetchType(first) == .networkLoad && Self.fetchType(fromMemory) == .localCache)
            #expect(Self.entryFiles(directory).isEmpty)
        }
    }

    /// As a command-line tool run twice: the second process is answered from what the first stored.
    @Test func aSecondProcessIsAnsweredFromTheFirstOnesDiskCache() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/cache/60").absoluteString
            let first = try await runProgram(probeURL.path, ["disk-cache-get", directory, url], mergingErrors: false)
            let second = try await runProgram(probeURL.path, ["disk-cache-get", directory, url], mergingErrors: false)
            #expect(first.status == 0 && first.output == "status=200 fetch=networkLoad\n")
            #expect(second.status == 0 && second.output == "status=200 fetch=localCache\n")
            #expect(server.statistics.totalRequests == 1)
        }
    }

    /// A process killed after writing a replacement's temporary file, before renaming it: the entry
    /// it had stored before is still the one served, and the temporary file is removed by the next
    /// store that finds it.
    @Test func aProcessKilledMidWriteLeavesThePreviousEntryWhole() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = "http://127.0.0.1:1/crash"
        let process = try ChildProcess(probeURL.path, ["disk-cache-crash", directory, url], mergingErrors: true)
        let (_, termination) = await process.outputAndTermination()
        #expect(termination == .signalled(SIGKILL))
        let folder = URL(fileURLWithPath: directory).appendingPathComponent("AlamofireNIO")
        let leftBehind = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftBehind.count == 1)
        let store = try #require(DiskCacheStore(cacheDirectory: URL(fileURLWithPath: directory)))
        let entry = try #require(store.entry(for: url))
        #expect(entry.body == Data("first".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }
}
