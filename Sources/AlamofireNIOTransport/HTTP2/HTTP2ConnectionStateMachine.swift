import NIOHTTP2

/// The life of one HTTP/2 connection, apart from its streams' own exchanges.
///
/// A connection is `starting` until the server's first SETTINGS frame says how many streams it
/// allows; then `active`, counting its open streams. A GOAWAY makes it `goingAway`: no new stream,
/// the streams the server will still process (those up to its last stream id) finish, and the
/// connection closes when none is left. While no stream is open a PING goes out at each tick of
/// the keep-alive timer; a PING still unanswered at the next tick means the peer is gone and the
/// connection closes. No I/O happens here; ``HTTP2Connection`` performs the actions.
struct HTTP2ConnectionStateMachine: Equatable {
    enum State: Equatable {
        case starting
        case active(maximumStreams: Int)
        /// The server sent GOAWAY with this last stream id.
        case goingAway(lastStreamID: HTTP2StreamID)
        case closed
    }

    enum Action: Equatable {
        case none
        /// The first SETTINGS arrived: the connection is ready for this many streams.
        case ready(maximumStreams: Int)
        /// The server changed its stream limit.
        case maximumStreamsChanged(Int)
        /// Tell the pool the connection takes no new stream; `close` when no stream is open.
        case goingAway(close: Bool)
        /// GOAWAY before SETTINGS: the connection never became usable.
        case failStart
        case sendPing
        case close
    }

    /// The stream limit assumed when the server's SETTINGS do not state one (RFC 9113 §6.5.2
    /// leaves it unlimited; 100 is the smallest limit servers are asked to allow).
    static let defaultMaximumStreams = 100

    private(set) var state: State = .starting
    private(set) var openStreams = 0
    private(set) var isPingOutstanding = false

    var isActive: Bool { if case .active = state { true } else { false } }

    /// The server's last stream id, if it sent GOAWAY: streams above it were not processed.
    var lastStreamID: HTTP2StreamID? {
        if case .goingAway(let lastStreamID) = state { return lastStreamID }
        return nil
    }

    mutating func settingsReceived(_ settings: HTTP2Settings) -> Action {
        let stated = settings.last { $0.parameter == .maxConcurrentStreams }?.value
        switch state {
        case .starting:
            let maximum = stated ?? Self.defaultMaximumStreams
            state = .active(maximumStreams: maximum)
            return .ready(maximumStreams: maximum)
        case .active(let current):
            guard let stated, stated != current else { return .none }
            state = .active(maximumStreams: stated)
            return .maximumStreamsChanged(stated)
        case .goingAway, .closed:
            return .none
        }
    }

    mutating func goAwayReceived(lastStreamID: HTTP2StreamID) -> Action {
        switch state {
        case .starting:
            state = .goingAway(lastStreamID: lastStreamID)
            return .failStart
        case .active:
            state = .goingAway(lastStreamID: lastStreamID)
            return .goingAway(close: openStreams == 0)
        case .goingAway(let previous):
            // A second GOAWAY may only lower the last stream id.
            state = .goingAway(lastStreamID: min(previous, lastStreamID))
            return .none
        case .closed:
            return .none
        }
    }

    mutating func streamOpened() {
        openStreams += 1
    }

    mutating func streamClosed() -> Action {
        openStreams = max(0, openStreams - 1)
        if case .goingAway = state, openStreams == 0 { return .close }
        return .none
    }

    /// The keep-alive timer ticked.
    mutating func pingTimerFired() -> Action {
        guard isActive else { return .none }
        if isPingOutstanding { return .close }
        guard openStreams == 0 else { return .none }
        isPingOutstanding = true
        return .sendPing
    }

    mutating func pingAcknowledged() {
        isPingOutstanding = false
    }

    mutating func channelInactive() {
        state = .closed
    }
}
