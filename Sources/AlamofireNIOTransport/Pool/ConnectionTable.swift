/// A pool's connections by id, with the counts its events ask for kept up to date as states change.
///
/// A pool may hold a thousand connections; with the counts, a request asking for a lease learns
/// without a scan whether any connection is still connecting, has room or speaks HTTP/2 (finding
/// which one has room, the one carrying the fewest, still scans them). Every change goes through the
/// subscript, which moves the old state out of the counts and the new one in, so the counts cannot
/// drift from the states.
struct ConnectionTable: Sequence, Equatable, ExpressibleByDictionaryLiteral {
    typealias State = ConnectionPoolStateMachine.ConnectionState

    /// Each connection's state.
    private(set) var states: [Int: State] = [:]
    /// Connections still connecting.
    private(set) var connectingCount = 0
    /// Open connections that can take another exchange.
    private(set) var withRoomCount = 0
    /// Open connections carrying at least one exchange.
    private(set) var activeCount = 0
    /// Open connections carrying none.
    private(set) var idleCount = 0
    /// Open HTTP/2 connections.
    private(set) var openHTTP2Count = 0
    /// Connections that are connecting or open: all but those closing.
    var notClosingCount: Int { connectingCount + activeCount + idleCount }

    init() {}

    init(dictionaryLiteral elements: (Int, State)...) {
        for (id, state) in elements { self[id] = state }
    }

    var count: Int { states.count }
    var isEmpty: Bool { states.isEmpty }
    var values: Dictionary<Int, State>.Values { states.values }

    subscript(id: Int) -> State? {
        get { states[id] }
        set {
            guard let newValue else {
                removeValue(forKey: id)
                return
            }
            if let old = states.updateValue(newValue, forKey: id) { tally(old, by: -1) }
            tally(newValue, by: 1)
        }
    }

    /// Removes a connection; its state, if it had one.
    @discardableResult
    mutating func removeValue(forKey id: Int) -> State? {
        guard let old = states.removeValue(forKey: id) else { return nil }
        tally(old, by: -1)
        return old
    }

    func makeIterator() -> Dictionary<Int, State>.Iterator { states.makeIterator() }

    /// Equal when the states are: the counts follow from them.
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.states == rhs.states }

    private mutating func tally(_ state: State, by delta: Int) {
        switch state {
        case .connecting:
            connectingCount += delta
        case .open(let version, let leased, let capacity):
            if leased < capacity { withRoomCount += delta }
            if leased > 0 { activeCount += delta } else { idleCount += delta }
            if version == .http2 { openHTTP2Count += delta }
        case .closing:
            break
        }
    }
}
