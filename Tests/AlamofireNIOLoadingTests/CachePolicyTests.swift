import AFSynchronization
import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import Synchronization
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111 freshness as values, and the cache policy's decisions against a URLCache of its own,
/// judged by a virtual clock.
@Suite struct CachePolicyTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A clock the test moves.
    final class VirtualClock: Sendable {
        private let time: Mutex<Date>
        init(_ start: Date = CachePolicyTests.start) { time = Mutex(start) }
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    // MARK: Freshness as values

    @Test func cacheControlDirectives() {
        let control = CacheControl(#"public, Max-Age=60, no-cache="Set-Cookie", s-maxage=x, max-age=5"#)
        #expect(control.seconds("max-age") == 60)
        #expect(control.has("public") && control.has("no-cache"))
        #expect(control.directives["no-cache"] == "Set-Cookie")
        #expect(control.seconds("s-maxage") == nil)
        #expect(CacheControl(nil).directives.isEmpty)
    }

    @Test func cacheControlKeepsCommasInsideQuotedArguments() {
        // Split at every comma, `max-age=5"` would become a directive of its own.
        let control = CacheControl(#"no-cache="Set-Cookie, max-age=5", private"#)
        #expect(control.directives == ["no-cache": "Set-Cookie, max-age=5", "private": ""])
        #expect(control.seconds("max-age") == nil)
        // Quoted pairs: an escaped quote neither ends the string nor stays escaped.
        #expect(CacheControl(#"community="a\"b, c", max-age=7"#).directives == ["community": #"a"b, c"#, "max-age": "7"])
        // A quote never closed: the header is split at every comma, so no directive after it is lost.
        #expect(CacheControl(#"x="a, no-store"#).has("no-store"))
        #expect(CacheControl(#"no-cache="a, max-age=9"#).seconds("max-age") == 9)
        #expect(CacheControl(#", ,max-age=3,"#).directives == ["max-age": "3"])
    }

    @Test func lifetimeFromMaxAgeThenExpiresThenTheHeuristic() {
        let date = Self.httpDate(Self.start)
        func lifetime(_ headers: [String: String], status: Int = 200) -> TimeInterval {
            CacheFreshness(headers: headers, statusCode: status, requestTime: Self.start, responseTime: Self.start).lifetime
        }
        #expect(lifetime(["Cache-Control": "max-age=60", "Expires": Self.httpDate(Self.start + 999), "Date": date]) == 60)
        #expect(lifetime(["Expires": Self.httpDate(Self.start + 120), "Date": date]) == 120)
        #expect(lifetime(["Expires": "0", "Date": date]) == 0)
        // A tenth of the time since the last change.
        #expect(lifetime(["Last-Modified": Self.httpDate(Self.start - 1000), "Date": date]) == 100)
        #expect(lifetime(["Last-Modified": Self.httpDate(Self.start - 1000), "Date": date], status: 500) == 0)
        #expect(lifetime([:]) == 0)
        // A private cache ignores s-maxage.
        #expect(lifetime(["Cache-Control": "s-maxage=60"]) == 0)
    }

    @Test func ageCountsTheAgeHeaderTheDelayAndTheTimeResident() {
        let freshness = CacheFreshness(
            headers: ["Cache-Control": "max-age=100", "Age": "10", "Date": Self.httpDate(Self.start)], statusCode: 200,
            requestTime: Self.start - 2, responseTime: Self.start)
        // 10 (Age) + 2 (the response's delay).
        #expect(freshness.initialAge == 12)
        #expect(freshness.age(at: Self.start + 50) == 62)
        #expect(freshness.isFresh(at: Self.start + 87))
        #expect(!freshness.isFresh(at: Self.start + 88))
    }

    // MARK: Decisions

    static func entry(
        _ url: URL, status: Int = 200, headers: [String: String], vary: [String: String] = [:], receivedAt: Date = start,
        body: String = "stored"
    ) -> CachedURLResponse {
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return CachedURLResponse(
            response: response, data: Data(body.utf8),
            userInfo: [CachePolicy.requestTimeKey: receivedAt, CachePolicy.responseTimeKey: receivedAt, CachePolicy.varyKey: vary],
            storagePolicy: .allowed)
    }

    static func lookUp(_ policy: CachePolicy, _ request: URLRequest) -> String {
        switch policy.lookUp(request, headerValue: { request.value(forHTTPHeaderField: $0) }) {
        case .load: "load"
        case .serve: "serve"
        case .revalidate(_, let validators): "revalidate " + validators.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        case .unavailable: "unavailable"
        }
    }

    @Test func freshEntriesAreServedStaleOnesRevalidated() {
        let clock = VirtualClock()
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache, now: { clock.now })
        let url = URL(string: "http://h.test/a?x=1")!
        let request = URLRequest(url: url)
        policy.store(Self.entry(url, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]), for: request)
        #expect(Self.lookUp(policy, request) == "serve")
        clock.advance(61)
        #expect(Self.lookUp(policy, request) == "revalidate If-None-Match: \"v1\"")
        // The same path with another query is another resource.
        #expect(Self.lookUp(policy, URLRequest(url: URL(string: "http://h.test/a?x=2")!)) == "load")
        // Unsafe and other methods never use the cache.
        var post = request
        post.httpMethod = "POST"
        #expect(Self.lookUp(policy, post) == "load")
    }

    @Test func requestDirectivesAndPoliciesDecide() {
        let clock = VirtualClock()
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache, now: { clock.now })
        let url = URL(string: "http://h.test/b")!
        policy.store(
            Self.entry(url, headers: ["Cache-Control": "max-age=60", "Last-Modified": Self.httpDate(Self.start - 10)]),
            for: URLRequest(url: url))
        clock.advance(30)
        func request(_ configure: (inout URLRequest) -> Void) -> URLRequest {
            var request = URLRequest(url: url)
            configure(&request)
            return request
        }
        let lastModified = "revalidate If-Modified-Since: \(Self.httpDate(Self.start - 10))"
        #expect(Self.lookUp(policy, request { $0.setValue("no-cache", forHTTPHeaderField: "Cache-Control") }) == lastModified)
        #expect(Self.lookUp(policy, request { $0.setValue("no-cache", forHTTPHeaderField: "Pragma") }) == lastModified)
        #expect(Self.lookUp(policy, request { $0.setValue("max-age=10", forHTTPHeaderField: "Cache-Control") }) == lastModified)
        #expect(Self.lookUp(policy, request { $0.setValue("max-age=40", forHTTPHeaderField: "Cache-Control") }) == "serve")
        #expect(Self.lookUp(policy, request { $0.setValue("min-fresh=40", forHTTPHeaderField: "Cache-Control") }) == lastModified)
        // Validators of the request's own: the server answers, not the cache.
        #expect(Self.lookUp(policy, request { $0.setValue("\"x\"", forHTTPHeaderField: "If-None-Match") }) == "load")
        #expect(Self.lookUp(policy, request { $0.cachePolicy = .reloadIgnoringLocalCacheData }) == "load")
        clock.advance(3600)
        #expect(Self.lookUp(policy, request { $0.cachePolicy = .returnCacheDataElseLoad }) == "serve")
        #expect(Self.lookUp(policy, request { $0.cachePolicy = .returnCacheDataDontLoad }) == "serve")
        let missing = URLRequest(url: URL(string: "http://h.test/none")!)
        var dontLoad = missing
        dontLoad.cachePolicy = .returnCacheDataDontLoad
        #expect(Self.lookUp(policy, dontLoad) == "unavailable")
        // The configuration's policy applies to requests that leave theirs at the default.
        let configured = CachePolicy(cache: cache, requestCachePolicy: .returnCacheDataDontLoad, now: { clock.now })
        #expect(Self.lookUp(configured, missing) == "unavailable")
        #expect(Self.lookUp(CachePolicy(cache: nil), dontLoad) == "unavailable")
    }

    @Test func varyMatchesTheStoredRequestHeaders() {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache, now: { CachePolicyTests.start })
        let url = URL(string: "http://h.test/v")!
        policy.store(
            Self.entry(
                url, headers: ["Cache-Control": "max-age=60", "Vary": "Accept-Language, X-Missing"], vary: ["accept-language": "fr"]),
            for: URLRequest(url: url))
        var french = URLRequest(url: url)
        french.setValue("fr", forHTTPHeaderField: "Accept-Language")
        var english = URLRequest(url: url)
        english.setValue("en", forHTTPHeaderField: "Accept-Language")
        #expect(Self.lookUp(policy, french) == "serve")
        #expect(Self.lookUp(policy, english) == "load")
    }

    @Test func whatMayBeStored() {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache)
        let url = URL(string: "http://h.test/s")!
        func proposal(status: Int = 200, _ headers: [String: String], method: String = "GET", body: Int = 10) -> Bool {
            var request = URLRequest(url: url)
            request.httpMethod = method
            let response = wireResponse(url, status: status, headers: headers.map { ($0.key, $0.value) })
            return policy.proposal(
                for: request, response: response, body: Data(count: body), requestTime: Self.start, responseTime: Self.start,
                headerValue: { _ in nil }) != nil
        }
        #expect(proposal([:]))
        #expect(!proposal(["Cache-Control": "no-store"]))
        #expect(!proposal(["Vary": "*"]))
        #expect(!proposal([:], method: "POST"))
        #expect(!proposal(status: 206, [:]))
        // A 304 answers only the conditional request that asked; it is never an entry of its own.
        #expect(!proposal(status: 304, ["Cache-Control": "max-age=60"]))
        #expect(!proposal(status: 500, [:]))
        #expect(proposal(status: 404, [:]))
        #expect(proposal(status: 302, ["Cache-Control": "max-age=5"]))
        #expect(!proposal(status: 302, [:]))
        // Over 5% of the cache's memory.
        #expect(!proposal([:], body: (1 << 20) / 20 + 1))
    }

    @Test func aNotModifiedRefreshesTheStoredResponse() throws {
        let clock = VirtualClock()
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache, now: { clock.now })
        let url = URL(string: "http://h.test/m")!
        let request = URLRequest(url: url)
        let entry = Self.entry(url, headers: ["Cache-Control": "max-age=10", "ETag": "\"v1\"", "Content-Length": "6", "X-Old": "1"])
        policy.store(entry, for: request)
        clock.advance(20)
        let notModified = HTTPURLResponse(
            url: url, statusCode: 304, httpVersion: nil,
            headerFields: ["Cache-Control": "max-age=100", "Content-Length": "0", "X-New": "2"])!
        let merged = policy.merge(notModified: notModified, into: entry, request: request, requestTime: clock.now, responseTime: clock.now)
        let response = try #require(merged.response as? HTTPURLResponse)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Cache-Control") == "max-age=100")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "6")
        #expect(response.value(forHTTPHeaderField: "X-Old") == "1" && response.value(forHTTPHeaderField: "X-New") == "2")
        #expect(merged.data == Data("stored".utf8))
        #expect(Self.lookUp(policy, request) == "serve")
    }

    @Test func unsafeMethodsInvalidate() {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache)
        let url = URL(string: "http://h.test/i")!
        policy.store(Self.entry(url, headers: ["Cache-Control": "max-age=60"]), for: URLRequest(url: url))
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        let failed = wireResponse(url, status: 500)
        policy.invalidate(after: post, response: failed)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) != nil)
        let created = wireResponse(url, status: 201)
        policy.invalidate(after: post, response: created)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    /// Entries for one path with different queries coexist, each served for its own URL, as
    /// URLSession keys them on Apple platforms (FoundationNetworking alone would keep one).
    @Test func queriesOfOnePathAreStoredApart() throws {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache)
        // Queries may hold what a path may not (`?`, `;`, `[`): each still gets a key of its own, and none traps.
        let urls = [
            "http://h.test/items?page=1", "http://h.test/items?page=2", "http://h.test/items?page=%3F2",
            "http://h.test/redirect-to?url=/range/5?chunk=1&abort=3", "http://h.test/items?a=1;b=2", "http://h.test/items?next=?",
            "http://h.test/items?%3F", "http://h.test/items?", "http://h.test/items",
        ]
        .map { URL(string: $0)! }
        for (index, url) in urls.enumerated() {
            policy.store(Self.entry(url, headers: ["Cache-Control": "max-age=60"], body: "\(index)"), for: URLRequest(url: url))
        }
        for (index, url) in urls.enumerated() {
            #expect(Self.lookUp(policy, URLRequest(url: url)) == "serve", "\(url)")
            let key = CachePolicy.key(for: URLRequest(url: url))
            #expect(cache.cachedResponse(for: key).map { String(decoding: $0.data, as: UTF8.self) } == "\(index)", "\(url)")
        }
        // A URL without a query is stored under itself, where URLCache's own lookup finds it.
        #expect(cache.cachedResponse(for: URLRequest(url: urls[8]))?.response.url == urls[8])
    }

    /// Writers racing on one key leave it listed once in URLCache's eviction order, so evicting it
    /// later cannot trap.
    @Test func concurrentStoresOfOneKeyListItOnce() throws {
        let cache = URLCache(memoryCapacity: 64 * 1024, diskCapacity: 0, diskPath: nil)
        let policy = CachePolicy(cache: cache)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let url = URL(string: "http://h.test/p")!
            policy.store(Self.entry(url, headers: ["Cache-Control": "max-age=60"]), for: URLRequest(url: url))
        }
        let order = Mirror(reflecting: cache).children.first { $0.label == "inMemoryCacheOrder" }?.value as? [String]
        #expect(order?.count == 1)
        // Filling the cache with other keys evicts it without trapping.
        for index in 0..<2000 {
            let url = URL(string: "http://h.test/other\(index)")!
            policy.store(Self.entry(url, headers: ["Cache-Control": "max-age=60"]), for: URLRequest(url: url))
        }
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "http://h.test/other1999")!)) != nil)
    }

    /// A stored redirect is followed as one from the network: the cached 301, then the target loaded.
    @Test func aStoredRedirectIsFollowed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.ephemeral
            let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            configuration.urlCache = cache
            let moved = server.url("/moved-for-good")
            CachePolicy(cache: cache).store(
                Self.entry(moved, status: 301, headers: ["Cache-Control": "max-age=600", "Location": "/get"], receivedAt: Date()),
                for: URLRequest(url: moved))
            let session = LoadingSession(transport: HTTPTransport(), configuration: configuration)
            let delegate = LoadingTaskTests.RecordingDelegate()
            session.makeTask(with: URLRequest(url: moved), delegate: delegate).resume()
            #expect(try await delegate.completion() == nil)
            #expect(delegate.events.first == "redirect 301 GET /get")
            #expect(delegate.metrics?.transactionMetrics.map(\.resourceFetchType) == [.localCache, .networkLoad])
            #expect(delegate.metrics?.redirectCount == 1)
        }
    }

    /// Through loading tasks against the server: stored, served from the cache while fresh (by the
    /// virtual clock), loaded again once stale.
    @Test func tasksServeFreshResponsesAndReloadStaleOnes() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // From now: the server's Date header is the wall clock's.
            let clock = VirtualClock(Date())
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            let session = LoadingSession(transport: HTTPTransport(), configuration: configuration, now: { clock.now })
            func load() async throws -> (TaskMetrics?, Data) {
                let delegate = LoadingTaskTests.RecordingDelegate()
                session.makeTask(with: URLRequest(url: server.url("/cache/60")), delegate: delegate).resume()
                #expect(try await delegate.completion() == nil)
                return (delegate.metrics, delegate.data)
            }
            let (first, body) = try await load()
            #expect(first?.transactionMetrics.first?.resourceFetchType == .networkLoad)
            let (second, cachedBody) = try await load()
            #expect(second?.transactionMetrics.map(\.resourceFetchType) == [.localCache])
            #expect(cachedBody == body)
            clock.advance(61)
            let (third, _) = try await load()
            #expect(third?.transactionMetrics.map(\.resourceFetchType) == [.networkLoad])
        }
    }
}
