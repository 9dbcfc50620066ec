/// At most `limit` values by key; adding one more drops the one used least recently.
///
/// The transport keeps a TLS context per client identity in one: identities compare by object, so an
/// app that makes a new identity for each request would otherwise keep a context for every one it ever
/// made. A dropped context lives on in the connections already using it.
struct RecentlyUsedCache<Key: Hashable, Value> {
    let limit: Int
    private var values: [Key: Value] = [:]
    /// Keys from the least to the most recently used.
    private var order: [Key] = []

    init(limit: Int) {
        precondition(limit > 0, "a cache holds at least one value")
        self.limit = limit
    }

    var count: Int { values.count }

    /// The value for `key`, which becomes the most recently used; nil when there is none.
    mutating func value(for key: Key) -> Value? {
        guard let value = values[key] else { return nil }
        touch(key)
        return value
    }

    /// Stores `value` for `key` as the most recently used, dropping the least recently used value
    /// when the cache is full.
    mutating func insert(_ value: Value, for key: Key) {
        if values.updateValue(value, forKey: key) != nil {
            touch(key)
            return
        }
        order.append(key)
        if order.count > limit { values[order.removeFirst()] = nil }
    }

    private mutating func touch(_ key: Key) {
        if let index = order.firstIndex(of: key) { order.remove(at: index) }
        order.append(key)
    }
}

extension RecentlyUsedCache: Sendable where Key: Sendable, Value: Sendable {}
