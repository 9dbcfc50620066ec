import AlamofireNIOLoading
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The disk half of a URLCache: its entry files as values, its index as a value, and the store in a
/// directory of the test's own (a second store on the same directory stands for another process).
@Suite struct DiskCacheStoreTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("disk-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func entry(_ url: String, body: String = "body") -> DiskCacheEntry {
        DiskCacheEntry(
            url: url, statusCode: 200, headers: [.init("Content-Type", "text/plain"), .init("ETag", "\"v1\"")], body: Data(body.utf8))
    }

    // MARK: Entries

    @Test func anEntryReadsBackAsItWasWritten() throws {
        var entry = Self.entry("https://example.com/a?q=%C3%A9", body: "héllo")
        entry.requestTime = Date(timeIntervalSinceReferenceDate: 800_000_001.25)
        entry.responseTime = Date(timeIntervalSinceReferenceDate: 800_000_002.5)
        entry.vary = ["accept-language": "fr", "accept": ""]
        #expect(try DiskCacheEntry(decoding: entry.encoded()) == entry)
        let bare = DiskCacheEntry(url: "http://h/", statusCode: 301, headers: [], body: Data())
        #expect(try DiskCacheEntry(decoding: bare.encoded()) == bare)
    }

    @Test func aDamagedOrForeignFileIsRefused() throws {
        let bytes = Self.entry("https://example.com/a").encoded()
        var flipped = bytes
        flipped[40] ^= 0x01
        #expect(throws: DiskCacheEntry.DecodingError.damaged) { try DiskCacheEntry(decoding: flipped) }
        #expect(throws: DiskCacheEntry.DecodingError.damaged) { try DiskCacheEntry(decoding: bytes.dropLast()) }
        #expect(throws: DiskCacheEntry.DecodingError.unknownFormat) { try DiskCacheEntry(decoding: Data("bplist00".utf8) + bytes) }
        #expect(throws: DiskCacheEntry.DecodingError.unknownFormat) { try DiskCacheEntry(decoding: Data()) }
        #expect(throws: DiskCacheEntry.DecodingError.truncated) { try DiskCacheEntry(decoding: bytes.prefix(12)) }
    }

    /// A file whose digest matches but whose lengths lie (written by something else) is refused
    /// before anything is allocated for what it announces.
    @Test func lengthsPastTheEndAreRefusedBeforeTheyAreAllocated() throws {
        let content = Data(Self.entry("https://example.com/a").encoded().dropLast(32))
        // The header count sits after the magic (8), the flags and dates (17), the status (8) and the URL.
        let headerCountOffset = 8 + 17 + 8 + 4 + "https://example.com/a".utf8.count
        var lyingCount = content
        lyingCount.replaceSubrange(headerCountOffset..<headerCountOffset + 4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: DiskCacheEntry.DecodingError.truncated) { try DiskCacheEntry(decoding: DiskCacheEntry.sealed(lyingCount)) }
        var lyingBody = content
        lyingBody.replaceSubrange(lyingBody.count - 12..<lyingBody.count - 4, with: [0, 0, 0, 0, 0, 0, 0, 0x40])
        #expect(throws: DiskCacheEntry.DecodingError.truncated) { try DiskCacheEntry(decoding: DiskCacheEntry.sealed(lyingBody)) }
        #expect(throws: DiskCacheEntry.DecodingError.truncated) { try DiskCacheEntry(decoding: DiskCacheEntry.sealed(content + [0])) }
        var invalidURL = content
        invalidURL[8 + 17 + 8 + 4] = 0xFF
        #expect(throws: DiskCacheEntry.DecodingError.invalidText) { try DiskCacheEntry(decoding: DiskCacheEntry.sealed(invalidURL)) }
    }

    @Test func anEntryBecomesTheCachedResponseThePolicyJudges() throws {
        var entry = Self.entry("https://example.com/a?b=1")
        entry.responseTime = Date(timeIntervalSinceReferenceDate: 800_000_002)
        entry.vary = ["accept": "text/plain"]
        let cached = try #require(entry.cachedResponse)
        let response = try #require(cached.response as? HTTPURLResponse)
        #expect(response.url?.absoluteString == "https://example.com/a?b=1")
        #expect(response.statusCode == 200 && response.value(forHTTPHeaderField: "etag") == "\"v1\"")
        #expect(cached.data == Data("body".utf8) && cached.storagePolicy == .allowed)
        #expect(cached.userInfo?["AlamofireNIO.responseTime"] as? Date == entry.responseTime)
        #expect(cached.userInfo?["AlamofireNIO.requestTime"] == nil)
        #expect(cached.userInfo?["AlamofireNIO.vary"] as? [String: String] == ["accept": "text/plain"])
    }

    // MARK: Index

    @Test func theIndexEvictsTheLeastRecentlyUsedFirst() {
        var index = DiskCacheIndex()
        index.used("a", size: 10)
        index.used("b", size: 20)
        index.used("c", size: 30)
        index.touched("a")
        index.touched("unknown")
        #expect(index.totalSize == 60)
        #expect(index.evictions(toFit: 45) == ["b"])
        #expect(index.evictions(toFit: 45) == [])
        index.used("c", size: 5)
        #expect(index.totalSize == 15)
        #expect(index.evictions(toFit: 5) == ["a"])
        index.removed("c")
        #expect(index.totalSize == 0 && index.items.isEmpty)
        index.used("d", size: 1)
        index.removeAll()
        #expect(index.evictions(toFit: 0) == [] && index.totalSize == 0)
    }

    // MARK: Store

    @Test func aStoreOnTheSameDirectoryReadsWhatAnotherWrote() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try #require(DiskCacheStore(cacheDirectory: directory))
        writer.write(Self.entry("https://example.com/a", body: "A"), capacity: 1 << 20)
        writer.write(Self.entry("https://example.com/a?x", body: "AX"), capacity: 1 << 20)
        let reader = try #require(DiskCacheStore(cacheDirectory: directory))
        #expect(reader.entry(for: "https://example.com/a")?.body == Data("A".utf8))
        #expect(reader.entry(for: "https://example.com/a?x")?.body == Data("AX".utf8))
        #expect(reader.entry(for: "https://example.com/b") == nil)
        #expect(reader.count == 2)
        // Written again by one, read again by the other: the new entry, whole.
        writer.write(Self.entry("https://example.com/a", body: "A2"), capacity: 1 << 20)
        #expect(reader.entry(for: "https://example.com/a")?.body == Data("A2".utf8))
        reader.remove(url: "https://example.com/a")
        #expect(writer.entry(for: "https://example.com/a") == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: writer.directory.path)
        #expect(files.count == 1 && files.allSatisfy { $0.hasSuffix(".response") })
    }

    @Test func writesPastTheCapacityEvictTheLeastRecentlyUsed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        let size = Self.entry("https://example.com/0").encoded().count
        for number in 0..<4 { store.write(Self.entry("https://example.com/\(number)"), capacity: 4 * size) }
        #expect(store.entry(for: "https://example.com/0") != nil)
        store.touch(url: "https://example.com/1")
        store.write(Self.entry("https://example.com/4"), capacity: 4 * size)
        store.write(Self.entry("https://example.com/5"), capacity: 4 * size)
        #expect(store.entry(for: "https://example.com/2") == nil)
        #expect(store.entry(for: "https://example.com/3") == nil)
        for kept in [0, 1, 4, 5] { #expect(store.entry(for: "https://example.com/\(kept)") != nil) }
        #expect(store.size == 4 * size)
        // An entry bigger than the whole capacity is not written.
        store.write(Self.entry("https://example.com/big", body: String(repeating: "x", count: 4 * size)), capacity: 4 * size)
        #expect(store.entry(for: "https://example.com/big") == nil && store.count == 4)
    }

    @Test func aDamagedFileIsNotServedAndIsRemoved() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        store.write(Self.entry("https://example.com/a"), capacity: 1 << 20)
        let file = store.directory.appendingPathComponent(store.fileName(for: "https://example.com/a"))
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: file)
        #expect(store.entry(for: "https://example.com/a") == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(store.count == 0)
    }

    /// A link, a FIFO or a device in an entry's place is not followed or read: the lookup misses at
    /// once instead of reading /dev/zero to the end or blocking on the FIFO.
    @Test func anEntryFileThatIsNotARegularFileIsNotRead() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        #expect(store.entry(for: "https://example.com/none") == nil)
        let link = store.directory.appendingPathComponent(store.fileName(for: "https://example.com/link")).path
        #expect(symlink("/dev/zero", link) == 0)
        #expect(store.entry(for: "https://example.com/link") == nil)
        let fifo = store.directory.appendingPathComponent(store.fileName(for: "https://example.com/fifo")).path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(store.entry(for: "https://example.com/fifo") == nil)
        // The folder is its owner's only.
        let attributes = try FileManager.default.attributesOfItem(atPath: store.directory.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    /// A temporary file whose writer's process ID is in use (as process 1 is at every launch in a
    /// container) is removed once it is an hour old.
    @Test func anOldTemporaryFileIsRemovedWhateverItsWritersID() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("AlamofireNIO")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let old = folder.appendingPathComponent(".0123456789abcdef0123456789abcdef.response.\(getpid()).7.tmp")
        let recent = folder.appendingPathComponent(".0123456789abcdef0123456789abcdef.response.\(getpid()).8.tmp")
        try Data("partial".utf8).write(to: old)
        try Data("partial".utf8).write(to: recent)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old.path)
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        #expect(store.entry(for: "https://example.com/a") == nil)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
    }

    /// FoundationNetworking's own `removeAllCachedResponses()` and `removeCachedResponses(since:)`
    /// on a URLCache of that directory empty the store (the latter cannot say since when).
    @Test func theURLCachesOwnRemovalsEmptyTheStore() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, diskPath: directory.path)
        #expect(DiskCacheStore.directory(of: cache)?.standardizedFileURL.path == directory.standardizedFileURL.path)
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        store.write(Self.entry("https://example.com/a"), capacity: 1 << 20)
        cache.removeAllCachedResponses()
        #expect(store.entry(for: "https://example.com/a") == nil && store.count == 0)
        store.write(Self.entry("https://example.com/b"), capacity: 1 << 20)
        #expect(store.entry(for: "https://example.com/b") != nil)
        cache.removeCachedResponses(since: Date())
        #expect(store.entry(for: "https://example.com/b") == nil)
        // The store marks itself again: an entry written now survives the next lookup.
        store.write(Self.entry("https://example.com/c"), capacity: 1 << 20)
        #expect(store.entry(for: "https://example.com/c") != nil)
    }

    @Test func aCacheWithoutDiskCapacityHasNoStore() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(DiskCacheStore.store(for: URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: directory.path)) == nil)
        let store = DiskCacheStore.store(for: URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, diskPath: directory.path))
        #expect(store != nil)
        #expect(DiskCacheStore.store(for: URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, diskPath: directory.path)) === store)
    }

    /// 10,000 entries: each write costs the same whatever the number already stored, a store made
    /// afterwards (another process) indexes them all once, and eviction keeps the newest.
    @Test func tenThousandEntries() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(DiskCacheStore(cacheDirectory: directory))
        let size = Self.entry("https://example.com/item/00000").encoded().count
        let capacity = 10_000 * size
        for number in 0..<10_000 {
            store.write(Self.entry(String(format: "https://example.com/item/%05d", number)), capacity: capacity)
        }
        #expect(store.count == 10_000 && store.size == capacity)
        let reopened = try #require(DiskCacheStore(cacheDirectory: directory))
        #expect(reopened.entry(for: "https://example.com/item/04321")?.url == "https://example.com/item/04321")
        #expect(reopened.count == 10_000)
        for number in 10_000..<10_100 {
            reopened.write(Self.entry(String(format: "https://example.com/item/%05d", number)), capacity: capacity)
        }
        #expect(reopened.count == 10_000)
        #expect(reopened.entry(for: "https://example.com/item/04321") != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).count == 10_000)
    }
}
