import AFSynchronization
import Crypto
package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl

private let systemWrite = Musl.write
#endif

/// The disk half of a `URLCache` for AlamofireNIO: responses kept across launches in the cache's
/// directory, up to its `diskCapacity`.
///
/// FoundationNetworking's own disk store lists its whole directory on every write and on every
/// lookup that misses memory, and cannot store about half of all URLs (its file names carry base64,
/// whose `/` it takes for a folder). This store keeps one file per URL in a folder of its own,
/// `AlamofireNIO` inside the cache's directory, named by a digest of the URL, so that a lookup is one
/// `open` and a write one file plus a `rename`, whatever the number of entries:
/// - **Atomic writes**: an entry is written to a temporary file and renamed over the old one. A
///   reader (in this process or another sharing the directory) sees the old entry or the new one,
///   never part of one; a process that dies mid-write leaves a temporary file that is never served
///   and is removed once its writer is gone. Each file also ends with a digest (see ``DiskCacheEntry``).
/// - **Eviction**: an index of the files, their sizes and their last use (``DiskCacheIndex``) is read
///   from the directory once per process; a write past the capacity removes the least recently used.
///   Files another process writes later are found by name and join the index when read.
/// - **The `URLCache`'s own removals**: FoundationNetworking's `removeAllCachedResponses()` and
///   `removeCachedResponses(since:)` delete the files in the cache's directory that are named like
///   its own entries. Two such files of this store's mark it: one dated 2001 (`removeAll` deletes
///   it) and one dated `distantFuture` (any `removeCachedResponses(since:)` deletes it). When either
///   is missing (or on first use), this store empties itself: after `removeCachedResponses(since:)` it cannot know the
///   date, so it removes more than was asked, never less.
package final class DiskCacheStore: Sendable {
    /// The folder the entries live in.
    package let directory: URL
    /// The marker files (see the type's overview).
    private let markers: [String]
    private let state = Mutex(State())

    private struct State {
        var index = DiskCacheIndex()
        var isLoaded = false
        var temporaryFiles = 0
    }

    /// A store in `cacheDirectory` (a `URLCache`'s directory); nil when its folder cannot be made.
    package init?(cacheDirectory: URL) {
        directory = cacheDirectory.appendingPathComponent("AlamofireNIO", isDirectory: true)
        markers = [
            cacheDirectory.appendingPathComponent("0.AlamofireNIO.storedcachedurlresponse").path,
            cacheDirectory.appendingPathComponent(
                "\(Int64(Date.distantFuture.timeIntervalSinceReferenceDate)).AlamofireNIO.storedcachedurlresponse"
            ).path,
        ]
        do {
            // Its owner's only: other users cannot list which URLs were fetched.
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            return nil
        }
    }

    // MARK: The store of a URLCache

    /// The store behind `cache`'s directory, shared by every session of the process that uses a
    /// cache with that directory; nil when the cache keeps nothing on disk (`diskCapacity` 0, or no
    /// directory).
    package static func store(for cache: URLCache) -> DiskCacheStore? {
        guard cache.diskCapacity > 0, let cacheDirectory = directory(of: cache) else { return nil }
        let key = cacheDirectory.standardizedFileURL.path
        return stores.withLock { stores in
            if let store = stores[key] { return store }
            let store = DiskCacheStore(cacheDirectory: cacheDirectory)
            stores[key] = store
            return store
        }
    }

    private static let stores = Mutex<[String: DiskCacheStore?]>([:])

    /// The directory FoundationNetworking's `URLCache` was made with (its `diskPath`, or its
    /// default under the caches directory). It has no public getter: its stored property is read
    /// by reflection.
    package static func directory(of cache: URLCache) -> URL? {
        // A subclass's mirror lists its own properties only: URLCache's are its superclass mirror's.
        var mirror: Mirror? = Mirror(reflecting: cache)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == "cacheDirectory" }) { return child.value as? URL }
            mirror = current.superclassMirror
        }
        return nil
    }

    // MARK: Entries

    /// The file an entry for `url` is kept in.
    package func fileName(for url: String) -> String {
        SHA256.hash(data: Data(url.utf8)).prefix(16).lowercaseHex + ".response"
    }

    /// The entry stored for `url`, if there is a whole one.
    package func entry(for url: String) -> DiskCacheEntry? {
        prepare()
        let name = fileName(for: url)
        let path = path(of: name)
        guard let data = Self.readEntryFile(at: path) else {
            state.withLock { $0.index.removed(name) }
            return nil
        }
        guard let entry = try? DiskCacheEntry(decoding: data), entry.url == url else {
            // Damaged, or another URL's under the same digest prefix: not served, and made room for.
            state.withLock { $0.index.removed(name) }
            unlink(path)
            return nil
        }
        state.withLock { $0.index.used(name, size: data.count) }
        // Its last use, for the order a later process evicts in.
        utimensat(AT_FDCWD, path, nil, 0)
        return entry
    }

    /// Marks the entry for `url` as just used, without reading it (it was served from memory).
    package func touch(url: String) {
        let name = fileName(for: url)
        state.withLock { $0.index.touched(name) }
    }

    /// Writes `entry` in place of what was stored for its URL, then removes the least recently used
    /// entries until the store fits `capacity` bytes. `beforeRename` runs once the temporary file is
    /// whole (the tests stop a process there).
    package func write(_ entry: DiskCacheEntry, capacity: Int, beforeRename: () -> Void = {}) {
        prepare()
        let bytes = entry.encoded()
        guard bytes.count <= capacity else { return }
        let name = fileName(for: entry.url)
        let number = state.withLock { state in
            state.temporaryFiles += 1
            return state.temporaryFiles
        }
        let temporary = directory.appendingPathComponent(".\(name).\(getpid()).\(number).tmp").path
        guard Self.writeNew(bytes, at: temporary) else {
            unlink(temporary)
            return
        }
        beforeRename()
        guard rename(temporary, path(of: name)) == 0 else {
            unlink(temporary)
            return
        }
        let evicted = state.withLock { state in
            state.index.used(name, size: bytes.count)
            return state.index.evictions(toFit: capacity)
        }
        for evictedName in evicted { unlink(path(of: evictedName)) }
    }

    /// Removes the entry for `url`.
    package func remove(url: String) {
        prepare()
        let name = fileName(for: url)
        state.withLock { $0.index.removed(name) }
        unlink(path(of: name))
    }

    /// Removes every entry.
    package func removeAll() {
        state.withLock { $0.index.removeAll() }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasSuffix(".response") {
            unlink(path(of: name))
        }
    }

    /// The path of the entry file `name`.
    private func path(of name: String) -> String { directory.appendingPathComponent(name).path }

    /// The bytes the entries this process knows of take.
    package var size: Int { state.withLock { $0.index.totalSize } }

    /// How many entries this process knows of.
    package var count: Int { state.withLock { $0.index.items.count } }

    // MARK: Upkeep

    /// Before each operation: empties the store when the `URLCache`'s own removal deleted a
    /// marker (or on first use, when there are none yet), and reads the index once.
    private func prepare() {
        if !markers.allSatisfy({ access($0, F_OK) == 0 }) {
            removeAll()
            // One byte each: `removeAllCachedResponses()` removes files only while their sizes add up to more than 0.
            for marker in markers { _ = Self.writeNew(Data([0x0A]), at: marker) }
        }
        guard !state.withLock({ $0.isLoaded }) else { return }
        let found = listEntries()
        state.withLock { state in
            guard !state.isLoaded else { return }
            state.isLoaded = true
            for (name, size, _) in found.sorted(by: { $0.modified < $1.modified }) { state.index.used(name, size: size) }
        }
    }

    /// The entry files in the folder (size, last modification), removing on the way the temporary
    /// files of writers that are gone.
    private func listEntries() -> [(name: String, size: Int, modified: Date)] {
        var found: [(name: String, size: Int, modified: Date)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            let path = path(of: name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { continue }
            let modified = attributes[.modificationDate] as? Date ?? .distantPast
            if name.hasSuffix(".tmp") {
                // `.<entry>.<pid>.<n>.tmp`: left by a process that died mid-write once no such process
                // is running, or once it is an hour old (a process ID can be reused: in a container
                // the program is process 1 at every launch).
                let parts = name.split(separator: ".")  // [<digest>, "response", <pid>, <n>, "tmp"]
                let writerIsGone = parts.count == 5 && pid_t(parts[2]).map { kill($0, 0) != 0 && errno == ESRCH } ?? true
                if writerIsGone || modified < Date(timeIntervalSinceNow: -3600) { unlink(path) }
                continue
            }
            guard name.hasSuffix(".response") else { continue }
            found.append((name, (attributes[.size] as? NSNumber)?.intValue ?? 0, modified))
        }
        return found
    }

    /// The contents of the entry file at `path`, of at most `limit` bytes; a link is not followed.
    private static func readEntryFile(at path: String, limit: Int = 1 << 31) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // Its size by seeking (`fstat`'s `struct stat` cannot be named in this module, see FileBody):
        // a FIFO cannot seek, a device reads as empty, and O_NONBLOCK keeps either from blocking.
        let size = lseek(descriptor, 0, SEEK_END)
        guard size >= 0, size <= limit, lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
        var data = Data(count: Int(size))
        let complete = data.withUnsafeMutableBytes { buffer in
            Self.transferAll(buffer.count) { offset in read(descriptor, buffer.baseAddress! + offset, buffer.count - offset) }
        }
        return complete ? data : nil
    }

    /// Writes `bytes` to a file that must not exist yet; false when any part fails.
    private static func writeNew(_ bytes: Data, at path: String) -> Bool {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return bytes.withUnsafeBytes { buffer in
            transferAll(buffer.count) { offset in systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset) }
        }
    }

    /// Calls `transfer` with the offset reached until `count` bytes are moved (a `read` or `write`
    /// returns how many it moved); false when one fails or moves nothing.
    private static func transferAll(_ count: Int, _ transfer: (Int) -> Int) -> Bool {
        var offset = 0
        while offset < count {
            let moved = transfer(offset)
            if moved < 0, errno == EINTR { continue }
            guard moved > 0 else { return false }
            offset += moved
        }
        return true
    }
}
