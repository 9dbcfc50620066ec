public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// The handlers of a `WebSocketRequest`'s events, as Alamofire spells them.
extension WebSocketRequest {
    /// Adds a handler of the events, each message serialized by `serializer` on the serialization
    /// queue; the handler is called on `queue`.
    ///
    /// - Parameters:
    ///   - serializer: The `WebSocketMessageSerializer` used to serialize each message.
    ///   - queue:      `DispatchQueue` on which to call `handler`. `.main` by default.
    ///   - handler:    Closure called with each `Event`.
    /// - Returns:      The instance.
    @preconcurrency
    @discardableResult
    public func streamSerializer<Serializer>(
        _ serializer: Serializer, on queue: DispatchQueue = .main,
        handler: @escaping @Sendable (_ event: Event<Serializer.Output, Serializer.Failure>) -> Void
    ) -> Self where Serializer: WebSocketMessageSerializer, Serializer.Failure == any Error {
        streamSerializer(serializer, delivering: Self.calling(handler, on: queue))
    }

    /// ``streamSerializer(_:on:handler:)`` delivering each event with what releases it; `inline` as
    /// ``forIncomingEvent(inline:handler:)`` says.
    func streamSerializer<Serializer>(
        _ serializer: Serializer, inline: Bool = false,
        delivering deliver: @escaping @Sendable (Event<Serializer.Output, Serializer.Failure>, @escaping @Sendable () -> Void) -> Void
    ) -> Self where Serializer: WebSocketMessageSerializer {
        forIncomingEvent(inline: inline) { incomingEvent, release in
            let event: Event<Serializer.Output, Serializer.Failure>
            switch incomingEvent {
            case .connected(let `protocol`):
                event = .init(socket: self, kind: .connected(protocol: `protocol`))
            case .receivedMessage(let message):
                do {
                    event = .init(socket: self, kind: .receivedMessage(try serializer.decode(message)))
                } catch {
                    // A serializer's `Failure` is `any Error` in Alamofire's public APIs; another
                    // error type has no event to carry it, and the message is dropped.
                    guard let failure = error as? Serializer.Failure else { return release() }
                    event = .init(socket: self, kind: .serializerFailed(failure))
                }
            case .disconnected(let closeCode, let reason):
                event = .init(socket: self, kind: .disconnected(closeCode: closeCode, reason: reason))
            case .completed(let completion):
                event = .init(socket: self, kind: .completed(completion))
            }
            deliver(event, release)
        }
    }

    /// Adds a handler of the events, each message decoded as `Value` by `decoder`.
    ///
    /// - Parameters:
    ///   - type:    `Decodable` type to decode from each message.
    ///   - queue:   `DispatchQueue` on which to call `handler`. `.main` by default.
    ///   - decoder: `DataDecoder` used to decode each message. `JSONDecoder()` by default.
    ///   - handler: Closure called with each `Event`.
    /// - Returns:   The instance.
    @preconcurrency
    @discardableResult
    public func streamDecodableEvents<Value>(
        _ type: Value.Type = Value.self, on queue: DispatchQueue = .main, using decoder: any DataDecoder = JSONDecoder(),
        handler: @escaping @Sendable (_ event: Event<Value, any Error>) -> Void
    ) -> Self where Value: Decodable & Sendable {
        streamSerializer(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), on: queue, handler: handler)
    }

    /// Adds a handler of the decoded messages only.
    ///
    /// - Parameters:
    ///   - type:    `Decodable` type to decode from each message.
    ///   - queue:   `DispatchQueue` on which to call `handler`. `.main` by default.
    ///   - decoder: `DataDecoder` used to decode each message. `JSONDecoder()` by default.
    ///   - handler: Closure called with each decoded value.
    /// - Returns:   The instance.
    @preconcurrency
    @discardableResult
    public func streamDecodable<Value>(
        _ type: Value.Type = Value.self, on queue: DispatchQueue = .main, using decoder: any DataDecoder = JSONDecoder(),
        handler: @escaping @Sendable (_ value: Value) -> Void
    ) -> Self where Value: Decodable & Sendable {
        streamDecodableEvents(Value.self, on: queue, using: decoder) { event in
            event.message.map(handler)
        }
    }

    /// Adds a handler of the events, with the messages as they arrived.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which to call `handler`. `.main` by default.
    ///   - handler: Closure called with each `Event`.
    /// - Returns:   The instance.
    @preconcurrency
    @discardableResult
    public func streamMessageEvents(
        on queue: DispatchQueue = .main, handler: @escaping @Sendable (_ event: Event<URLSessionWebSocketTask.Message, Never>) -> Void
    ) -> Self {
        streamSerializer(PassthroughWebSocketMessageDecoder(), delivering: Self.calling(handler, on: queue))
    }

    /// Adds a handler of the messages only.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which to call `handler`. `.main` by default.
    ///   - handler: Closure called with each message.
    /// - Returns:   The instance.
    @preconcurrency
    @discardableResult
    public func streamMessages(
        on queue: DispatchQueue = .main, handler: @escaping @Sendable (_ message: URLSessionWebSocketTask.Message) -> Void
    ) -> Self {
        streamMessageEvents(on: queue) { event in
            event.message.map(handler)
        }
    }
}

/// Turns a WebSocket message into a value.
@_spi(WebSocket) public protocol WebSocketMessageSerializer<Output, Failure>: Sendable {
    /// The value a message becomes.
    associatedtype Output: Sendable
    /// The error serialization throws.
    associatedtype Failure: Error = any Error

    /// Serializes `message`.
    func decode(_ message: URLSessionWebSocketTask.Message) throws -> Output
}

extension WebSocketMessageSerializer {
    /// A serializer decoding each message's JSON as `Value`.
    public static func json<Value>(
        decoding _: Value.Type = Value.self, using decoder: JSONDecoder = JSONDecoder()
    ) -> DecodableWebSocketMessageDecoder<Value> where Self == DecodableWebSocketMessageDecoder<Value> {
        Self(decoder: decoder)
    }
}

/// Hands each message on as it is.
struct PassthroughWebSocketMessageDecoder: WebSocketMessageSerializer {
    typealias Failure = Never

    func decode(_ message: URLSessionWebSocketTask.Message) -> URLSessionWebSocketTask.Message {
        message
    }
}

/// Decodes each message (a text message's UTF-8, or a data message's bytes) as `Value`.
@_spi(WebSocket) public struct DecodableWebSocketMessageDecoder<Value: Decodable & Sendable>: WebSocketMessageSerializer {
    /// Why a message could not be decoded.
    public enum Error: Swift.Error {
        /// The decoder threw.
        case decoding(any Swift.Error)
        /// The message is of a kind this decoder does not know.
        case unknownMessage(description: String)
    }

    /// The decoder used.
    public let decoder: any DataDecoder

    /// Creates a message decoder that decodes with `decoder`.
    ///
    /// - Parameter decoder: The `DataDecoder` used.
    public init(decoder: any DataDecoder) {
        self.decoder = decoder
    }

    /// Decodes `message` as `Value`.
    public func decode(_ message: URLSessionWebSocketTask.Message) throws -> Value {
        let data: Data
        switch message {
        case .data(let messageData):
            data = messageData
        case .string(let string):
            data = Data(string.utf8)
        @unknown default:
            throw Error.unknownMessage(description: String(describing: message))
        }
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw Error.decoding(error)
        }
    }
}
