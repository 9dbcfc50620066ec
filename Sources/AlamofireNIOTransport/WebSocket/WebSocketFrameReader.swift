public import NIOCore
import NIOWebSocket

/// A message a WebSocket carries: text (valid UTF-8) or binary.
public enum TransportWebSocketMessage: Sendable, Hashable {
    case text(String)
    case binary(ByteBuffer)

    /// The size of the message's payload in bytes.
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.readableBytes
        }
    }
}

/// The client side's reading of the frames a server sends (RFC 6455), as a value: control frames
/// are recognised, data frames reassembled into messages, and every rule a server can break is
/// turned into the close code the client answers with. It knows nothing of channels; the
/// connection handler acts on what it returns.
struct WebSocketFrameReader {
    /// What one frame amounts to.
    enum Outcome: Equatable {
        /// A fragment of a message still incomplete.
        case none
        case message(TransportWebSocketMessage)
        case ping(ByteBuffer)
        case pong(ByteBuffer)
        /// The server's close frame: its code (nil when the frame had none) and reason.
        case close(code: UInt16?, reason: ByteBuffer)
        /// The server broke the protocol: close with `code`; `description` says how.
        case violation(code: WebSocketErrorCode, description: String)
    }

    /// The largest message accepted (once inflated); a larger one closes with 1009.
    let maximumMessageSize: Int
    /// permessage-deflate's codec, when negotiated: RSV1 on a message's first frame marks it compressed.
    private let inflater: PerMessageDeflate?
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    private var fragmentsAreCompressed = false

    init(maximumMessageSize: Int, inflater: PerMessageDeflate? = nil) {
        self.maximumMessageSize = maximumMessageSize
        self.inflater = inflater
    }

    mutating func read(_ frame: WebSocketFrame) -> Outcome {
        // A server never masks (RFC 6455 §5.1); RSV1 means compressed, only with permessage-deflate
        // and only on a message's first frame (RFC 7692 §6); RSV2 and RSV3 no extension here defines.
        guard frame.maskKey == nil else { return .violation(code: .protocolError, description: "the server sent a masked frame") }
        let startsMessage = frame.opcode == .text || frame.opcode == .binary
        guard !frame.rsv2, !frame.rsv3, !frame.rsv1 || (inflater != nil && startsMessage) else {
            return .violation(code: .protocolError, description: "the server set reserved bits no extension defines")
        }
        switch frame.opcode {
        case .ping, .pong, .connectionClose:
            // The decoder rejects fragmented and long control frames before they get here.
            return control(frame)
        case .text, .binary:
            guard fragments == nil else {
                return .violation(code: .protocolError, description: "the server started a message before finishing the last one")
            }
            fragmentsAreText = frame.opcode == .text
            fragmentsAreCompressed = frame.rsv1
            return append(frame)
        case .continuation:
            guard fragments != nil else { return .violation(code: .protocolError, description: "the server continued no message") }
            return append(frame)
        default:
            return .violation(code: .protocolError, description: "the server sent a frame with the reserved opcode \(frame.opcode)")
        }
    }

    private func control(_ frame: WebSocketFrame) -> Outcome {
        var payload = frame.data
        switch frame.opcode {
        case .ping: return .ping(payload)
        case .pong: return .pong(payload)
        default:
            guard payload.readableBytes > 0 else { return .close(code: nil, reason: ByteBuffer()) }
            guard let code = payload.readInteger(as: UInt16.self) else {
                return .violation(code: .protocolError, description: "the server's close frame has a one-byte code")
            }
            guard Self.isValidReceivedCloseCode(code) else {
                return .violation(code: .protocolError, description: "the server closed with the invalid code \(code)")
            }
            guard String(validating: payload.readableBytesView, as: UTF8.self) != nil else {
                return .violation(code: .dataInconsistentWithMessage, description: "the server's close reason is not UTF-8")
            }
            return .close(code: code, reason: payload)
        }
    }

    private mutating func append(_ frame: WebSocketFrame) -> Outcome {
        var data = frame.data
        let size = (fragments?.readableBytes ?? 0) + data.readableBytes
        guard size <= maximumMessageSize else {
            fragments = nil
            return .violation(
                code: .messageTooLarge, description: "the server sent a message larger than the maximum of \(maximumMessageSize) bytes")
        }
        if fragments == nil {
            fragments = data
        } else {
            fragments!.writeBuffer(&data)
        }
        guard frame.fin, var message = fragments else { return .none }
        fragments = nil
        if fragmentsAreCompressed, let inflater {
            do {
                message = try inflater.decompress(message, limit: maximumMessageSize, allocator: ByteBufferAllocator())
            } catch .overLimit {
                return .violation(
                    code: .messageTooLarge, description: "the server sent a message larger than the maximum of \(maximumMessageSize) bytes")
            } catch {
                return .violation(
                    code: .dataInconsistentWithMessage, description: "the server sent a compressed message that does not inflate")
            }
        }
        guard fragmentsAreText else { return .message(.binary(message)) }
        guard let text = String(validating: message.readableBytesView, as: UTF8.self) else {
            return .violation(code: .dataInconsistentWithMessage, description: "the server sent a text message that is not UTF-8")
        }
        return .message(.text(text))
    }

    /// Codes a close frame may carry (RFC 6455 §7.4): 1000–1003, 1007–1011 and 3000–4999.
    static func isValidReceivedCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}
