import Foundation
import NIOCore
import NIOWebSocket

/// The rules of an open WebSocket's life on the client side, as a value: reading the server's
/// frames (through ``WebSocketFrameReader``) and the close handshake in both directions. Each event
/// returns what the connection handler must do; the handler does the I/O.
///
/// ```
/// open ──close()────────────▶ closeSent ──server's close / timeout / EOF──▶ closed
///   │ ──server's close (echoed)───────────────────────────────────────────▶ closed
///   │ ──violation, cancel(), EOF, error ──────────────────────────────────▶ closed
/// ```
struct WebSocketConnectionStateMachine {
    enum State: Equatable {
        case open
        /// The client sent its close frame and waits for the server's.
        case closeSent
        case closed
    }

    /// What to do with a frame or a decoding failure.
    enum InboundAction {
        case none
        case deliver(TransportWebSocketMessage)
        /// Answer the server's ping with a pong carrying `payload`.
        case answerPing(ByteBuffer)
        case pong(ByteBuffer)
        /// The server closed: echo its close frame when `echo`, deliver the close, end the connection.
        case peerClosed(code: UInt16?, reason: ByteBuffer, echo: Bool)
        /// The server broke the protocol: close with `code`, fail with `error`.
        case violation(code: WebSocketErrorCode, error: TransportError)
    }

    /// How the connection ends when the TCP connection closes or the close handshake times out.
    enum EndAction {
        /// Normally, without a close from the server.
        case finish
        case fail(TransportError)
    }

    private(set) var state = State.open
    private var reader: WebSocketFrameReader

    init(maximumMessageSize: Int, inflater: PerMessageDeflate? = nil) {
        reader = WebSocketFrameReader(maximumMessageSize: maximumMessageSize, inflater: inflater)
    }

    /// Whether messages and pings may be sent.
    var canSend: Bool { state == .open }

    mutating func received(_ frame: WebSocketFrame) -> InboundAction {
        guard state != .closed else { return .none }
        switch reader.read(frame) {
        case .none:
            return .none
        case .message(let message):
            // After the client's close only the server's answer matters: messages still coming are
            // dropped, so that a server streaming on cannot fill memory while the close waits.
            return state == .open ? .deliver(message) : .none
        case .ping(let payload):
            return state == .open ? .answerPing(payload) : .none
        case .pong(let payload):
            return .pong(payload)
        case .close(let code, let reason):
            let echo = state == .open
            state = .closed
            return .peerClosed(code: code, reason: reason, echo: echo)
        case .violation(let code, let description):
            state = .closed
            let kind: URLError.Code = code == .messageTooLarge ? .dataLengthExceedsMaximum : .badServerResponse
            return .violation(code: code, error: TransportError(kind, description))
        }
    }

    /// The frame decoder rejected the bytes (a frame over the size limit, a fragmented or long
    /// control frame).
    mutating func decodingFailed(_ error: any Error) -> InboundAction {
        guard state != .closed else { return .none }
        state = .closed
        if let error = error as? NIOWebSocketError, error == .invalidFrameLength {
            return .violation(
                code: .messageTooLarge,
                error: TransportError(
                    .dataLengthExceedsMaximum, "the server sent a frame larger than the maximum of \(reader.maximumMessageSize) bytes"))
        }
        return .violation(
            code: .protocolError, error: TransportError(.badServerResponse, "the server sent an invalid frame", underlyingError: error))
    }

    /// The client asks to close: whether to send the close frame (and wait for the server's).
    mutating func closeRequested() -> Bool {
        guard state == .open else { return false }
        state = .closeSent
        return true
    }

    /// The client abandons the connection: the state it was in (an open one is sent a close frame as
    /// a courtesy, without waiting; a closed one needs nothing).
    mutating func cancelled() -> State {
        defer { state = .closed }
        return state
    }

    /// Whether reads may be held back while the reader lags: not once the client has closed, when
    /// the server's answer must be read before the close times out.
    var mayHoldReads: Bool { state == .open }

    /// The TCP connection closed, or failed with `error`.
    mutating func connectionEnded(error: (any Error)? = nil) -> EndAction? {
        defer { state = .closed }
        switch state {
        case .open:
            return .fail(.connectionLost("the server closed the connection without a close frame", error))
        case .closeSent:
            return .finish
        case .closed:
            return nil
        }
    }

    /// The server did not answer the client's close in time.
    mutating func closeTimedOut() -> EndAction? {
        guard state == .closeSent else { return nil }
        state = .closed
        return .finish
    }
}
