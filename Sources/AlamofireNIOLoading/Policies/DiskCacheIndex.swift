/// The disk store's bookkeeping as a value: which entry files a process knows of, their sizes, and
/// the order they were last used in, so that what to evict is decided without touching the disk.
///
/// Every operation costs O(1) (eviction amortised): each use gets the next stamp, `order` maps
/// stamps to names, and eviction walks the stamps upward from the oldest, skipping those a later
/// use replaced.
package struct DiskCacheIndex: Sendable {
    package struct Item: Equatable, Sendable {
        package var size: Int
        var stamp: UInt64
    }

    package private(set) var items: [String: Item] = [:]
    /// Names by the stamp of their last use; a stamp a later use replaced is absent.
    private var order: [UInt64: String] = [:]
    private var oldestStamp: UInt64 = 0
    private var nextStamp: UInt64 = 0
    /// The sum of the known entries' sizes, in bytes.
    package private(set) var totalSize = 0

    package init() {}

    /// An entry was written or read: it is now the most recently used, with this size.
    package mutating func used(_ name: String, size: Int) {
        removed(name)
        items[name] = Item(size: size, stamp: nextStamp)
        order[nextStamp] = name
        nextStamp += 1
        totalSize += size
    }

    /// An entry was used again (served from memory, say): it becomes the most recently used, if
    /// the index knows it.
    package mutating func touched(_ name: String) {
        guard let item = items[name] else { return }
        used(name, size: item.size)
    }

    /// An entry is gone (removed, or found missing or damaged).
    package mutating func removed(_ name: String) {
        guard let item = items.removeValue(forKey: name) else { return }
        order[item.stamp] = nil
        totalSize -= item.size
    }

    package mutating func removeAll() {
        items = [:]
        order = [:]
        oldestStamp = nextStamp
        totalSize = 0
    }

    /// The least recently used entries whose removal makes the rest fit `capacity` bytes, oldest
    /// first; they leave the index (the caller removes their files).
    package mutating func evictions(toFit capacity: Int) -> [String] {
        var evicted: [String] = []
        while totalSize > capacity, oldestStamp < nextStamp {
            if let name = order.removeValue(forKey: oldestStamp), let item = items.removeValue(forKey: name) {
                totalSize -= item.size
                evicted.append(name)
            }
            oldestStamp += 1
        }
        return evicted
    }
}
