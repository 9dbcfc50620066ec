import Testing

@testable import AlamofireNIOTransport

@Suite struct ConnectionTableTests {
    typealias State = ConnectionPoolStateMachine.ConnectionState

    struct Counts: Equatable {
        var connecting = 0, withRoom = 0, active = 0, idle = 0, openHTTP2 = 0
    }

    static func counts(_ table: ConnectionTable) -> Counts {
        Counts(
            connecting: table.connectingCount, withRoom: table.withRoomCount, active: table.activeCount, idle: table.idleCount,
            openHTTP2: table.openHTTP2Count)
    }

    /// The counts as a scan of the states gives them: what the table's counts must always equal.
    static func recounted(_ table: ConnectionTable) -> Counts {
        var counts = Counts()
        for state in table.values {
            switch state {
            case .connecting: counts.connecting += 1
            case .open(let version, let leased, let capacity):
                if leased < capacity { counts.withRoom += 1 }
                if leased > 0 { counts.active += 1 } else { counts.idle += 1 }
                if version == .http2 { counts.openHTTP2 += 1 }
            case .closing: break
            }
        }
        return counts
    }

    @Test func theCountsFollowAConnectionThroughItsLife() {
        var table = ConnectionTable()
        table[7] = .connecting
        #expect(Self.counts(table) == Counts(connecting: 1))
        table[7] = .open(.http1, leased: 0, capacity: 1)
        #expect(Self.counts(table) == Counts(withRoom: 1, idle: 1))
        table[7] = .open(.http1, leased: 1, capacity: 1)
        #expect(Self.counts(table) == Counts(active: 1))
        table[7] = .closing
        #expect(Self.counts(table) == Counts())
        #expect(table.count == 1)
        #expect(table.removeValue(forKey: 7) == .closing)
        #expect(table.removeValue(forKey: 7) == nil)
        #expect(table.isEmpty)
        #expect(Self.counts(table) == Counts())
    }

    @Test func anHTTP2ConnectionHasRoomUntilItsStreamsAreTaken() {
        var table: ConnectionTable = [1: .open(.http2, leased: 99, capacity: 100), 2: .connecting]
        #expect(Self.counts(table) == Counts(connecting: 1, withRoom: 1, active: 1, openHTTP2: 1))
        table[1] = .open(.http2, leased: 100, capacity: 100)
        #expect(Self.counts(table) == Counts(connecting: 1, active: 1, openHTTP2: 1))
        table[2] = nil
        #expect(Self.counts(table) == Counts(active: 1, openHTTP2: 1))
        #expect(table == [1: .open(.http2, leased: 100, capacity: 100)])
    }

    /// Ten thousand changes drawn from a fixed seed, over ids that collide: after each one the counts
    /// equal a scan of the states. Opens include HTTP/2 with one stream and more exchanges than the
    /// capacity, which a server lowering its stream limit leaves behind.
    @Test func theCountsNeverDriftFromTheStates() {
        var random = SeededRandom(seed: 0x5EED)
        var table = ConnectionTable()
        for step in 0..<10_000 {
            let id = Int.random(in: 0..<16, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: table[id] = .connecting
            case 1: table[id] = .closing
            case 2: table[id] = nil
            case 3: table.removeValue(forKey: id)
            default:
                let capacity = Int.random(in: 1...4, using: &random)
                let version: ConnectionPoolStateMachine.HTTPVersion = Bool.random(using: &random) ? .http2 : .http1
                table[id] = .open(version, leased: Int.random(in: 0...capacity + 1, using: &random), capacity: capacity)
            }
            #expect(Self.counts(table) == Self.recounted(table), "after step \(step)")
            #expect(table.notClosingCount == table.values.count { $0 != .closing }, "after step \(step)")
        }
    }

    /// SplitMix64: a random sequence that is the same on every run.
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
