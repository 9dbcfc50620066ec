import AFSynchronization
import Synchronization

/// Requests a session made that will not resume on their own and have not finished, held weakly.
/// When the session goes away they finish with `.sessionDeinitialized`, as Alamofire's do; a request
/// nobody else holds is not kept alive for that. Entries of requests that went away unfinished are pruned as
/// the registry grows.
final class RequestRegistry: Sendable {
    private struct Entry {
        weak var request: Request?
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The size at which dead entries are next pruned.
        var pruneAt = 64
    }

    private let state = Mutex(State())

    /// Registers a request just made.
    func add(_ request: Request) {
        state.withLock { state in
            state.entries[ObjectIdentifier(request)] = Entry(request: request)
            guard state.entries.count >= state.pruneAt else { return }
            state.entries = state.entries.filter { $0.value.request != nil }
            state.pruneAt = max(64, state.entries.count * 2)
        }
    }

    /// Forgets a request whose serializers have all run.
    func remove(_ request: Request) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(request)) }
    }

    /// The registered requests still alive, emptying the registry.
    func takeAll() -> [Request] {
        state.withLock { state in
            defer { state.entries.removeAll() }
            return state.entries.values.compactMap(\.request)
        }
    }

    /// How many entries are held, dead ones included, for the tests.
    var count: Int { state.withLock { $0.entries.count } }
}
