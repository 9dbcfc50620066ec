import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response cache through a Session, as URLSession caches for Alamofire: each cache policy,
/// freshness, revalidation with a 304, Vary, no-store, invalidation and `CachedResponseHandler`s.
/// Each test has a URLCache of its own.
@Suite struct CacheTests {
    static func session(
        monitor: RecordingMonitor? = nil, cachedResponseHandler: (any CachedResponseHandler)? = nil,
        configure: (URLSessionConfiguration) -> Void = { _ in }
    ) -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
        configure(configuration)
        return Session(
            configuration: configuration, cachedResponseHandler: cachedResponseHandler, eventMonitors: monitor.map { [$0] } ?? [])
    }

    /// Where the last attempt's response came from.
    static func fetchType(_ response: AFDataResponse<Data>) -> TaskMetrics.ResourceFetchType? {
        response.metrics?.transactionMetrics.last?.resourceFetchType
    }

    static func load(_ request: DataRequest) async throws -> AFDataResponse<Data> {
        try await withTimeout { await request.serializingData().response }
    }

    @Test func aFreshResponseIsServedFromTheCache() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Self.session(monitor: monitor)
            let first = try await Self.load(session.request(server.url("/cache/60")))
            let second = try await Self.load(session.request(server.url("/cache/60")))
            #expect(Self.fetchType(first) == .networkLoad)
            #expect(Self.fetchType(second) == .localCache)
            #expect(second.data == first.data && second.response?.statusCode == 200)
            #expect(second.response?.value(forHTTPHeaderField: "Cache-Control") == "public, max-age=60")
            // Offered to the cache once: a response served from it is not offered again.
            #expect(await monitor.events.filter { $0 == "dataTaskWillCacheResponse" }.count == 1)
        }
    }

    /// As URLSession on Apple platforms: the cache keys on the whole URL, so two URLs that differ
    /// only in their query are stored apart and each is served for itself.
    @Test func urlsDifferingOnlyInTheirQueryAreCachedApart() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let first = try await Self.load(session.request(server.url("/cache/60?page=1")))
            let second = try await Self.load(session.request(server.url("/cache/60?page=2")))
            #expect(first.data != second.data)
            let firstAgain = try await Self.load(session.request(server.url("/cache/60?page=1")))
            let secondAgain = try await Self.load(session.request(server.url("/cache/60?page=2")))
            #expect(Self.fetchType(firstAgain) == .localCache && firstAgain.data == first.data)
            #expect(Self.fetchType(secondAgain) == .localCache && secondAgain.data == second.data)
            #expect(server.statistics.totalRequests == 2)
        }
    }

    @Test func anETagIsRevalidatedAndA304AnswersWithTheStoredBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let first = try await Self.load(session.request(server.url("/etag/v1")))
            let second = try await Self.load(session.request(server.url("/etag/v1")))
            #expect(first.response?.statusCode == 200)
            #expect(second.response?.statusCode == 200)
            #expect(second.data == first.data)
            #expect(Self.fetchType(second) == .networkLoad)
            // The revalidation went on the wire: the transaction's response is the server's 304.
            #expect((second.metrics?.transactionMetrics.last?.response as? HTTPURLResponse)?.statusCode == 304)
            // The request as the user sees it carries no validators.
            #expect(second.request?.value(forHTTPHeaderField: "If-None-Match") == nil)
        }
    }

    /// The stored body a 304 stands for is counted as received, as URLSession's `didReceive data`
    /// of it is, whether the body is collected or handed over as it comes (an `onHTTPResponse` handler).
    @Test(arguments: [false, true])
    func a304sStoredBodyIsCountedAsDownloadProgress(withResponseHandler: Bool) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let first = try await Self.load(session.request(server.url("/etag/v1")))
            let length = Int64(try #require(first.data).count)
            var request = session.request(server.url("/etag/v1"))
            if withResponseHandler { request = request.onHTTPResponse { _ in } }
            // A handler runs on its queue after the count moves: the request's own progress is read.
            let second = try await Self.load(request.downloadProgress(queue: .global()) { _ in })
            #expect((second.metrics?.transactionMetrics.last?.response as? HTTPURLResponse)?.statusCode == 304)
            #expect(second.data == first.data)
            #expect(length > 0)
            #expect(request.downloadProgress.completedUnitCount == length)
            #expect(request.downloadProgress.totalUnitCount == length)
        }
    }

    @Test func lastModifiedIsRevalidatedToo() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let first = try await Self.load(session.request(server.url("/cache")))
            let second = try await Self.load(session.request(server.url("/cache")))
            #expect((second.metrics?.transactionMetrics.last?.response as? HTTPURLResponse)?.statusCode == 304)
            #expect(second.response?.statusCode == 200 && second.data == first.data)
        }
    }

    @Test func varyKeepsResponsesApartByTheNamedHeaders() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/response-headers?Cache-Control=max-age%3D60&Vary=X-Flavour")
            func load(_ flavour: String) async throws -> TaskMetrics.ResourceFetchType? {
                Self.fetchType(try await Self.load(session.request(url, headers: ["X-Flavour": flavour])))
            }
            #expect(try await load("vanilla") == .networkLoad)
            #expect(try await load("vanilla") == .localCache)
            #expect(try await load("mint") == .networkLoad)
        }
    }

    @Test func noStoreIsNeverStored() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Self.session(monitor: monitor)
            let url = server.url("/response-headers?Cache-Control=no-store")
            _ = try await Self.load(session.request(url))
            #expect(Self.fetchType(try await Self.load(session.request(url) { $0.cachePolicy = .returnCacheDataElseLoad })) == .networkLoad)
            #expect(await monitor.events.filter { $0 == "dataTaskWillCacheResponse" }.isEmpty)
        }
    }

    @Test func eachCachePolicy() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/cache/60")
            _ = try await Self.load(session.request(url))
            func fetched(_ policy: URLRequest.CachePolicy, _ url: URL) async throws -> AFDataResponse<Data> {
                try await Self.load(session.request(url) { $0.cachePolicy = policy })
            }
            #expect(Self.fetchType(try await fetched(.reloadIgnoringLocalCacheData, url)) == .networkLoad)
            #expect(Self.fetchType(try await fetched(.returnCacheDataElseLoad, url)) == .localCache)
            #expect(Self.fetchType(try await fetched(.returnCacheDataDontLoad, url)) == .localCache)
            // A stale entry (no freshness at all) still answers returnCacheDataElseLoad.
            let stale = server.url("/get")
            _ = try await Self.load(session.request(stale))
            #expect(Self.fetchType(try await fetched(.returnCacheDataElseLoad, stale)) == .localCache)
            #expect(Self.fetchType(try await fetched(.useProtocolCachePolicy, stale)) == .networkLoad)
            // Nothing stored and loading not allowed: URLSession's resourceUnavailable.
            let missing = try await fetched(.returnCacheDataDontLoad, server.url("/uuid"))
            #expect((missing.error?.underlyingError as? URLError)?.code == .resourceUnavailable)
            #expect(missing.response == nil)
            // The configuration's policy, for requests that keep the default.
            let offline = Self.session { $0.requestCachePolicy = .returnCacheDataDontLoad }
            let refused = try await Self.load(offline.request(url))
            #expect((refused.error?.underlyingError as? URLError)?.code == .resourceUnavailable)
        }
    }

    @Test func responseCachersDecidePerSessionAndPerRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/cache/60")
            let refusing = Self.session(cachedResponseHandler: ResponseCacher.doNotCache)
            _ = try await Self.load(refusing.request(url))
            #expect(Self.fetchType(try await Self.load(refusing.request(url))) == .networkLoad)
            // The request's handler wins over the session's.
            _ = try await Self.load(refusing.request(url).cacheResponse(using: ResponseCacher.cache))
            #expect(Self.fetchType(try await Self.load(refusing.request(url))) == .localCache)

            let modifying = Self.session(
                cachedResponseHandler: ResponseCacher(
                    behavior: .modify { _, proposed in
                        CachedURLResponse(
                            response: proposed.response, data: Data("modified".utf8), userInfo: proposed.userInfo, storagePolicy: .allowed)
                    }))
            _ = try await Self.load(modifying.request(url))
            let served = try await Self.load(modifying.request(url))
            #expect(Self.fetchType(served) == .localCache)
            #expect(served.data == Data("modified".utf8))
        }
    }

    @Test func anUnsafeMethodsSuccessInvalidatesTheStoredResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/response-headers?Cache-Control=max-age%3D60")
            _ = try await Self.load(session.request(url))
            #expect(Self.fetchType(try await Self.load(session.request(url))) == .localCache)
            _ = try await Self.load(session.request(url, method: .post))
            #expect(Self.fetchType(try await Self.load(session.request(url))) == .networkLoad)
        }
    }

    /// A 304 answering the request's own validators is the response, and is not stored over the 200.
    @Test func aNotModifiedToTheRequestsOwnValidatorIsPassedThroughNotStored() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/etag/mine")
            let first = try await Self.load(session.request(url))
            let conditional = try await Self.load(session.request(url, headers: ["If-None-Match": "\"mine\""]))
            #expect(conditional.response?.statusCode == 304)
            let plain = try await Self.load(session.request(url))
            #expect(plain.response?.statusCode == 200 && plain.data == first.data)
        }
    }

    /// `Vary: Cookie` tells apart responses to requests whose stored cookies differ.
    @Test func varyCookieFollowsTheCookiesSent() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/response-headers?Cache-Control=max-age%3D60&Vary=Cookie")
            _ = try await Self.load(session.request(server.url("/cookies/set?user=a")))
            #expect(Self.fetchType(try await Self.load(session.request(url))) == .networkLoad)
            #expect(Self.fetchType(try await Self.load(session.request(url))) == .localCache)
            _ = try await Self.load(session.request(server.url("/cookies/set?user=b")))
            #expect(Self.fetchType(try await Self.load(session.request(url))) == .networkLoad)
        }
    }

    /// Alamofire's documented `.modify` replaces `userInfo`; the entry is still served while fresh.
    @Test func anEntryWhoseUserInfoWasReplacedIsStillServed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let cacher = ResponseCacher(
                behavior: .modify { _, response in
                    CachedURLResponse(response: response.response, data: response.data, userInfo: ["key": "value"], storagePolicy: .allowed)
                })
            let session = Self.session(cachedResponseHandler: cacher)
            _ = try await Self.load(session.request(server.url("/cache/60")))
            #expect(Self.fetchType(try await Self.load(session.request(server.url("/cache/60")))) == .localCache)
        }
    }

    /// A POST answered with a 303 invalidates what is stored for its Location.
    @Test func aRedirectedUnsafeMethodInvalidatesItsLocation() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let target = server.url("/cache/60")
            _ = try await Self.load(session.request(target))
            #expect(Self.fetchType(try await Self.load(session.request(target))) == .localCache)
            let post = session.request(
                server.url("/redirect-to"), method: .post, parameters: ["url": target.absoluteString, "status_code": "303"],
                encoding: URLEncoding.queryString
            ).redirect(using: Redirector.doNotFollow)
            // Not followed: the GET of the Location would store it again.
            #expect(try await Self.load(post).response?.statusCode == 303)
            #expect(Self.fetchType(try await Self.load(session.request(target))) == .networkLoad)
        }
    }

    @Test func downloadsAreServedFromTheCacheToo() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let url = server.url("/cache/60")
            let first = try await Self.load(session.request(url))
            let download = try await withTimeout { await session.download(url).serializingData().response }
            #expect(download.metrics?.transactionMetrics.last?.resourceFetchType == .localCache)
            #expect(download.value == first.data)
        }
    }
}
