import AFSynchronization
package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Where a task meets the response cache, by RFC 9111 and URLSession's cache policies: looked up
/// before the first exchange, revalidated with `If-None-Match`/`If-Modified-Since` when stale,
/// offered the final response of a GET, and invalidated by an unsafe method's success.
///
/// Entries live in the configuration's `urlCache`: in its memory, where `URLCache`'s own API sees
/// them, and, when it has a `diskCapacity`, in AlamofireNIO's ``DiskCacheStore`` in its directory,
/// which a later process finds again (of `URLCache`'s methods, only `removeAllCachedResponses()`
/// and `removeCachedResponses(since:)` reach it). An entry whose `Vary` names a credential header is
/// kept in memory only. (FoundationNetworking's own disk store lists its whole directory on
/// every write, too slow to sit behind every request; a lookup that misses memory still reads what
/// others wrote to it, as `URLCache.cachedResponse(for:)` does.)
/// FoundationNetworking's `URLCache` keys entries by host, port and path only: a URL with a query
/// is stored in its memory under a key whose path carries it (see ``key(for:)``), and an entry is
/// used only when its response's URL is the request's; the disk store keys by the whole URL. Entries
/// carry when they were requested and received, and the request headers their `Vary` names, in
/// `userInfo` (on disk, only those). Writes to a cache are serialised (see
/// ``store(_:proposed:for:)``) and made off the event loops.
package struct CachePolicy: @unchecked Sendable {
    // @unchecked: URLCache is thread-safe (its own locks) but not marked Sendable.
    let cache: URLCache?
    /// The disk half of `cache`, when it had a disk capacity as the session was made.
    let diskStore: DiskCacheStore?
    /// The configuration's `requestCachePolicy`, for requests that leave theirs at `.useProtocolCachePolicy`.
    let defaultPolicy: URLRequest.CachePolicy
    /// The clock freshness is judged by (a test's virtual one, or the wall clock).
    let now: @Sendable () -> Date

    package init(
        cache: URLCache? = nil, requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.cache = cache
        self.diskStore = cache.flatMap { DiskCacheStore.store(for: $0) }
        self.defaultPolicy = requestCachePolicy
        self.now = now
    }

    /// What a task does before its first exchange.
    package enum Lookup {
        /// Load from the network (the response may then be stored).
        case load
        /// Answer with the stored response, without an exchange.
        case serve(CachedURLResponse)
        /// Load with these validators; a 304 answers with the stored response.
        case revalidate(CachedURLResponse, validators: [(name: String, value: String)])
        /// `.returnCacheDataDontLoad` and nothing stored: the task fails.
        case unavailable
    }

    /// The policy `request` loads by.
    func effectivePolicy(for request: URLRequest) -> URLRequest.CachePolicy {
        request.cachePolicy == .useProtocolCachePolicy ? defaultPolicy : request.cachePolicy
    }

    /// Decides how `request` is loaded; `headerValue` gives a request header as it will be sent
    /// (the session's headers and cookies included), for `Vary` and the request's directives.
    package func lookUp(_ request: URLRequest, headerValue: (String) -> String?) -> Lookup {
        let policy = effectivePolicy(for: request)
        guard let cache, Self.isCacheable(method: request.httpMethod), !Self.hasOwnValidators(request) else {
            return policy == .returnCacheDataDontLoad ? .unavailable : .load
        }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData, .reloadRevalidatingCacheData:
            return .load
        default:
            break
        }
        let entry = storedEntry(for: request, in: cache).flatMap { entry in
            Self.matches(entry, request, headerValue: headerValue) ? entry : nil
        }
        switch policy {
        case .returnCacheDataElseLoad:
            return entry.map { .serve($0) } ?? .load
        case .returnCacheDataDontLoad:
            return entry.map { .serve($0) } ?? .unavailable
        default:
            guard let entry, let response = entry.response as? HTTPURLResponse else { return .load }
            let requestControl = CacheControl(headerValue("Cache-Control"))
            let responseControl = CacheControl(response.value(forHTTPHeaderField: "Cache-Control"))
            let mustRevalidate =
                requestControl.has("no-cache") || headerValue("Pragma")?.lowercased() == "no-cache" || responseControl.has("no-cache")
            if !mustRevalidate, let freshness = Self.freshness(of: entry) {
                let now = now()
                let age = freshness.age(at: now)
                let fresh =
                    freshness.isFresh(at: now) && requestControl.seconds("max-age").map { age <= $0 } != false
                    && requestControl.seconds("min-fresh").map { freshness.lifetime - age >= $0 } != false
                if fresh { return .serve(entry) }
            }
            let validators = Self.validators(of: response)
            return validators.isEmpty ? .load : .revalidate(entry, validators: validators)
        }
    }

    /// What is stored for `request`: from the cache's memory, else from the disk store (and then
    /// kept in memory as well).
    private func storedEntry(for request: URLRequest, in cache: URLCache) -> CachedURLResponse? {
        let key = Self.key(for: request)
        let url = request.url?.absoluteString
        if let entry = cache.cachedResponse(for: key) {
            if let diskStore, let url { diskStore.touch(url: url) }
            return entry
        }
        guard let diskStore, cache.diskCapacity > 0, let url, let stored = diskStore.entry(for: url)?.cachedResponse else { return nil }
        // `.allowedInMemoryOnly` in memory, as `store` keeps it: FoundationNetworking would write an
        // `.allowed` entry to its own disk.
        var userInfo = stored.userInfo ?? [:]
        userInfo[Self.diskAllowedKey] = true
        storeInMemory(
            CachedURLResponse(response: stored.response, data: stored.data, userInfo: userInfo, storagePolicy: .allowedInMemoryOnly),
            key: key, of: cache)
        return stored
    }

    /// The response a 304 to a revalidation stands for: the stored one with the 304's headers,
    /// fresh again; it replaces the stored entry.
    func merge(
        notModified: HTTPURLResponse, into entry: CachedURLResponse, request: URLRequest, requestTime: Date, responseTime: Date
    ) -> CachedURLResponse {
        guard let stored = entry.response as? HTTPURLResponse, let url = stored.url else { return entry }
        var fields = stored.allHeaderFields as? [String: String] ?? [:]
        for (name, value) in notModified.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            // RFC 9111 §3.2: a 304 does not change how the stored body is framed.
            if ["content-length", "content-encoding", "transfer-encoding", "content-range"].contains(name.lowercased()) { continue }
            for existing in fields.keys where existing.lowercased() == name.lowercased() { fields[existing] = nil }
            fields[name] = value
        }
        let merged = HTTPURLResponse(url: url, statusCode: stored.statusCode, httpVersion: "HTTP/1.1", headerFields: fields) ?? stored
        var userInfo = entry.userInfo ?? [:]
        userInfo[Self.requestTimeKey] = requestTime
        userInfo[Self.responseTimeKey] = responseTime
        // An entry the disk may keep is refreshed there too.
        let policy = userInfo[Self.diskAllowedKey] as? Bool == true ? .allowed : entry.storagePolicy
        let refreshed = CachedURLResponse(response: merged, data: entry.data, userInfo: userInfo, storagePolicy: policy)
        store(refreshed, for: request)
        return refreshed
    }

    /// The entry to offer the delegate for a GET's final response, or nil when it may not be
    /// stored (`no-store`, `Vary: *`, a status a cache does not keep, a body too big). The response
    /// is made into Foundation's type only for an entry.
    func proposal(
        for request: URLRequest, response: ReceivedResponse, body: Data, requestTime: Date, responseTime: Date,
        headerValue: (String) -> String?
    ) -> CachedURLResponse? {
        // A 304 or 206 only makes sense as the answer to the request that asked for it.
        guard cache != nil, Self.isCacheable(method: request.httpMethod), response.statusCode >= 200,
            ![206, 304].contains(response.statusCode)
        else { return nil }
        let requestControl = CacheControl(headerValue("Cache-Control"))
        let responseControl = CacheControl(response.value(forHTTPHeaderField: "Cache-Control"))
        guard !requestControl.has("no-store"), !responseControl.has("no-store") else { return nil }
        let explicitlyFresh = responseControl.has("max-age") || response.value(forHTTPHeaderField: "Expires") != nil
        guard CacheFreshness.heuristicallyCacheable.contains(response.statusCode) || (explicitlyFresh && response.statusCode < 400)
        else { return nil }
        let varied = Self.varyNames(response.value(forHTTPHeaderField: "Vary"))
        guard !varied.contains("*") else { return nil }
        guard body.count <= largestStorableBody else { return nil }
        var varyValues: [String: String] = [:]
        for name in varied { varyValues[name] = headerValue(name) ?? "" }
        let userInfo: [AnyHashable: Any] = [
            Self.requestTimeKey: requestTime, Self.responseTimeKey: responseTime, Self.varyKey: varyValues,
        ]
        return CachedURLResponse(response: response.urlResponse, data: body, userInfo: userInfo, storagePolicy: .allowed)
    }

    /// The largest body stored, in the cache's memory or on its disk when it keeps one.
    var largestStorableBody: Int {
        guard let cache else { return 0 }
        return Self.largestBody(storedIn: max(cache.memoryCapacity, diskStore != nil ? cache.diskCapacity : 0))
    }

    /// The largest body a store of `capacity` bytes keeps: 5% of it, as on Apple platforms.
    static func largestBody(storedIn capacity: Int) -> Int { capacity / 20 }

    /// Stores what the delegate let through: in the cache's memory when the body is at most 5% of
    /// it, and in the disk store when the entry's policy is `.allowed` and the body at most 5% of the
    /// disk. The entry keeps the proposal's timing and `Vary` values when the delegate replaced its
    /// `userInfo`.
    func store(_ response: CachedURLResponse, proposed: CachedURLResponse? = nil, for request: URLRequest) {
        guard let cache, response.storagePolicy != .notAllowed else { return }
        var userInfo = response.userInfo ?? [:]
        for key in [Self.requestTimeKey, Self.responseTimeKey, Self.varyKey] where userInfo[key] == nil {
            userInfo[key] = proposed?.userInfo?[key]
        }
        // In memory as `.allowedInMemoryOnly`, so FoundationNetworking writes nothing to its own disk;
        // whether the disk may keep it is remembered for a 304's refresh (see `merge`).
        userInfo[Self.diskAllowedKey] = response.storagePolicy == .allowed
        let entry = CachedURLResponse(
            response: response.response, data: response.data, userInfo: userInfo, storagePolicy: .allowedInMemoryOnly)
        storeInMemory(entry, key: Self.key(for: request), of: cache)
        let diskCapacity = cache.diskCapacity
        if let diskStore, response.storagePolicy == .allowed, response.data.count <= Self.largestBody(storedIn: diskCapacity),
            let url = request.url,
            !Self.variesOnCredentials(userInfo), let stored = DiskCacheEntry(entry, url: url.absoluteString)
        {
            diskStore.write(stored, capacity: diskCapacity)
        }
    }

    /// Whether an entry's `Vary` values hold a request's credentials (`Authorization`, `Cookie`):
    /// such an entry is kept in memory only, so that no credential is written to disk.
    static func variesOnCredentials(_ userInfo: [AnyHashable: Any]) -> Bool {
        guard let vary = userInfo[varyKey] as? [String: String] else { return false }
        return vary.keys.contains { ["authorization", "proxy-authorization", "cookie"].contains($0.lowercased()) }
    }

    /// Puts `entry` in the cache's memory under `key`.
    private func storeInMemory(_ entry: CachedURLResponse, key: URLRequest, of cache: URLCache) {
        guard entry.data.count <= Self.largestBody(storedIn: cache.memoryCapacity) else { return }
        // FoundationNetworking's URLCache appends a key to its eviction order on every store, even
        // one that replaces an entry: the order grows without bound, and evicting a key listed
        // twice traps. Removing the entry first keeps one listing per key, and one lock for every
        // write keeps two writers from listing it twice between them.
        Self.writeLock.withLock {
            cache.removeCachedResponse(for: key)
            cache.storeCachedResponse(entry, for: key)
        }
    }

    /// Serialises AlamofireNIO's writes to every URLCache (see ``store(_:proposed:for:)``).
    private static let writeLock = NSLock()

    /// Whether `invalidate(after:response:)` would remove anything (an unsafe method's success).
    func invalidates(after request: URLRequest, response: ReceivedResponse) -> Bool {
        cache != nil && !Self.isSafe(method: request.httpMethod) && (200..<400).contains(response.statusCode)
    }

    /// RFC 9111 §4.4: an unsafe method's success removes what is stored for its URL, and for its
    /// `Location` and `Content-Location` on the same host.
    func invalidate(after request: URLRequest, response: ReceivedResponse) {
        guard invalidates(after: request, response: response), let cache, let url = request.url else { return }
        var targets = [url]
        for field in ["Location", "Content-Location"] {
            if let value = response.value(forHTTPHeaderField: field), let target = URL(string: value, relativeTo: url)?.absoluteURL,
                target.host == url.host
            {
                targets.append(target)
            }
        }
        Self.writeLock.withLock {
            for target in targets {
                let key = Self.key(for: URLRequest(url: target))
                if cache.cachedResponse(for: key)?.response.url?.absoluteString == target.absoluteString {
                    cache.removeCachedResponse(for: key)
                }
            }
        }
        for target in targets { diskStore?.remove(url: target.absoluteString) }
    }

    // MARK: Keys

    /// The request an entry is stored under. FoundationNetworking's `URLCache` keys by host, port and
    /// path alone; URLSession on Apple platforms by the whole URL. A URL with a query is stored under
    /// one whose path carries the query (`/items%3Fpage=2`), so that entries for different queries
    /// coexist, each served for its own URL; a URL without one under itself, where `URLCache`'s own
    /// `cachedResponse(for:)` finds it. The query is percent-encoded again for the path (its `%` and
    /// whatever a query allows and a path does not, such as `?`), so distinct queries keep distinct keys.
    static func key(for request: URLRequest) -> URLRequest {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let query = components.percentEncodedQuery,
            let escapedQuery = query.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        else { return request }
        components.percentEncodedQuery = nil
        components.percentEncodedPath += queryMarker + escapedQuery
        guard let keyURL = components.url else { return request }
        var key = request
        key.url = keyURL
        return key
    }

    /// What a key's path carries in place of the query's `?`.
    private static let queryMarker = "%3F"

    // MARK: Entries

    static let requestTimeKey = "AlamofireNIO.requestTime"
    static let responseTimeKey = "AlamofireNIO.responseTime"
    static let varyKey = "AlamofireNIO.vary"
    /// Whether an entry kept in memory may be kept on disk too (it was stored as `.allowed`).
    static let diskAllowedKey = "AlamofireNIO.diskAllowed"

    /// An entry's freshness; nil when it does not say when it was received (then it is revalidated).
    static func freshness(of entry: CachedURLResponse) -> CacheFreshness? {
        guard let response = entry.response as? HTTPURLResponse,
            let responseTime = entry.userInfo?[responseTimeKey] as? Date
                ?? response.value(forHTTPHeaderField: "Date").flatMap(CookieDate.parse)
        else { return nil }
        let requestTime = entry.userInfo?[requestTimeKey] as? Date ?? responseTime
        return CacheFreshness(
            headers: response.allHeaderFields as? [String: String] ?? [:], statusCode: response.statusCode, requestTime: requestTime,
            responseTime: responseTime)
    }

    /// Whether `entry` answers `request`: the same URL (query included) and the same values for
    /// the headers its `Vary` names.
    static func matches(_ entry: CachedURLResponse, _ request: URLRequest, headerValue: (String) -> String?) -> Bool {
        guard let url = request.url, entry.response.url?.absoluteString == url.absoluteString else { return false }
        guard let response = entry.response as? HTTPURLResponse else { return true }
        let varied = varyNames(response.value(forHTTPHeaderField: "Vary"))
        guard !varied.contains("*") else { return false }
        let stored = entry.userInfo?[varyKey] as? [String: String] ?? [:]
        return varied.allSatisfy { name in (stored[name] ?? "") == (headerValue(name) ?? "") }
    }

    /// The header names a `Vary` value lists, lowercased.
    static func varyNames(_ vary: String?) -> [String] {
        (vary ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        .filter { !$0.isEmpty }
    }

    static func validators(of response: HTTPURLResponse) -> [(name: String, value: String)] {
        var validators: [(name: String, value: String)] = []
        if let etag = response.value(forHTTPHeaderField: "ETag") { validators.append(("If-None-Match", etag)) }
        if let lastModified = response.value(forHTTPHeaderField: "Last-Modified") { validators.append(("If-Modified-Since", lastModified)) }
        return validators
    }

    /// A request that manages its own validators gets the server's answer as it is.
    static func hasOwnValidators(_ request: URLRequest) -> Bool {
        ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"].contains {
            request.value(forHTTPHeaderField: $0) != nil
        }
    }

    static func isCacheable(method: String?) -> Bool { (method ?? "GET").uppercased() == "GET" }

    static func isSafe(method: String?) -> Bool { ["GET", "HEAD", "OPTIONS", "TRACE"].contains((method ?? "GET").uppercased()) }
}
