import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Stream handlers

extension DataStreamRequest {
    /// Adds a `StreamHandler` which performs no parsing on incoming `Data`.
    ///
    /// - Parameters:
    ///   - queue:  `DispatchQueue` on which to perform `StreamHandler` closure.
    ///   - stream: `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns:  The `DataStreamRequest`.
    @discardableResult
    @preconcurrency public func responseStream(on queue: DispatchQueue = .main, stream: @escaping Handler<Data, Never>) -> Self {
        appendStream(
            .unserialized(on: queue), serializing: { .success($0) }, deliver: callingHandler(stream),
            complete: completingHandler(stream))
        return self
    }

    /// Adds a `StreamHandler` which uses the provided `DataStreamSerializer` to process incoming `Data`.
    ///
    /// - Parameters:
    ///   - serializer: `DataStreamSerializer` used to process incoming `Data`. Its work is done on the `serializationQueue`.
    ///   - queue:      `DispatchQueue` on which to perform `StreamHandler` closure.
    ///   - stream:     `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns:      The `DataStreamRequest`.
    @discardableResult
    @preconcurrency public func responseStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer, on queue: DispatchQueue = .main, stream: @escaping Handler<Serializer.SerializedObject, AFError>
    ) -> Self where Serializer.SerializedObject: Sendable {
        appendStream(
            .serialized(on: queue), serializing: Self.serializing(with: serializer), deliver: callingHandler(stream),
            complete: completingHandler(stream))
        return self
    }

    /// Adds a `StreamHandler` which parses incoming `Data` as a UTF8 `String`.
    ///
    /// - Parameters:
    ///   - queue:      `DispatchQueue` on which to perform `StreamHandler` closure.
    ///   - stream:     `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns:  The `DataStreamRequest`.
    @discardableResult
    @preconcurrency public func responseStreamString(on queue: DispatchQueue = .main, stream: @escaping Handler<String, Never>) -> Self {
        appendStream(
            .serialized(on: queue), serializing: { .success(String(decoding: $0, as: UTF8.self)) }, deliver: callingHandler(stream),
            complete: completingHandler(stream))
        return self
    }

    /// Adds a `StreamHandler` which parses incoming `Data` using the provided `DataDecoder`.
    ///
    /// - Parameters:
    ///   - type:         `Decodable` type to parse incoming `Data` into.
    ///   - queue:        `DispatchQueue` on which to perform `StreamHandler` closure.
    ///   - decoder:      `DataDecoder` used to decode the incoming `Data`.
    ///   - preprocessor: `DataPreprocessor` used to process the incoming `Data` before it's passed to the `decoder`.
    ///   - stream:       `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    @preconcurrency public func responseStreamDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, on queue: DispatchQueue = .main, using decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor(), stream: @escaping Handler<T, AFError>
    ) -> Self {
        responseStream(using: DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor), on: queue, stream: stream)
    }

    // MARK: The stream core

    /// A serializer's work on one chunk, its errors made ``AFError``s as Alamofire makes them.
    static func serializing<Serializer: DataStreamSerializer>(
        with serializer: Serializer
    ) -> @Sendable (Data) -> Result<Serializer.SerializedObject, AFError> {
        { data in
            Result { try serializer.serialize(data) }
                .mapError { $0.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: $0))) }
        }
    }

    /// Runs a user's stream handler: an error it throws becomes the request's error (replacing any
    /// other, as Alamofire's `capturingError` does) and cancels it.
    func capturingError(from handler: () throws -> Void) {
        do {
            try handler()
        } catch {
            let failure = error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error)))
            mutableState.withLock { $0.machine.replaceError(with: failure) }
            cancel()
        }
    }

    /// Delivers each event to a user's handler, then reports the chunk handled.
    func callingHandler<Success, Failure>(
        _ handler: @escaping Handler<Success, Failure>
    ) -> @Sendable (Stream<Success, Failure>, ChunkReceipt) -> Void {
        { [unowned self] stream, receipt in
            capturingError { try handler(stream) }
            receipt.handled()
        }
    }

    /// Delivers the completion to a user's handler, whose errors cannot be handled any more.
    func completingHandler<Success, Failure>(_ handler: @escaping Handler<Success, Failure>) -> @Sendable (Stream<Success, Failure>) -> Void
    {
        { stream in try? handler(stream) }
    }

    /// How a consumer's chunks reach it.
    enum StreamDelivery {
        /// Serialized on the serialization queue, where the monitors hear of each result and a failure
        /// cancels the request when ``automaticallyCancelOnStreamError``, then delivered on the queue.
        case serialized(on: DispatchQueue)
        /// Passed as they are, with no hop, and delivered on the queue.
        case unserialized(on: DispatchQueue)
        /// Passed as they are and delivered at once on the thread that received them: one hand-over
        /// between threads fewer per chunk, for a consumer of AlamofireNIO's own that may run anywhere
        /// (an async stream's feed). Chunks stay in order, as one task receives them.
        case whereReceived

        /// Where chunks and the completion are delivered; nil where they were received.
        var queue: DispatchQueue? {
            switch self {
            case .serialized(let queue), .unserialized(let queue): queue
            case .whereReceived: nil
            }
        }
    }

    /// Adds a consumer of the stream: each chunk is serialized and delivered as `delivery` says, with
    /// the receipt the consumer reports on. Once the request has finished and every chunk has been
    /// delivered, `complete` gets the completion, on the delivery's queue.
    func appendStream<Success: Sendable, Failure: Error>(
        _ delivery: StreamDelivery, serializing serialize: @escaping @Sendable (Data) -> Result<Success, Failure>,
        deliver: @escaping @Sendable (Stream<Success, Failure>, ChunkReceipt) -> Void,
        complete: @escaping @Sendable (Stream<Success, Failure>) -> Void
    ) {
        let parser: @Sendable (Data) -> Void = { [unowned self] data in
            let request = self
            let receipt = ChunkReceipt(request: request, bytes: data.count)
            let deliverAsIs: @Sendable () -> Void = {
                deliver(Stream(event: .stream(serialize(data)), token: CancellationToken(request)), receipt)
            }
            switch delivery {
            case .whereReceived:
                deliverAsIs()
            case .unserialized(let queue):
                queue.async(execute: deliverAsIs)
            case .serialized(let queue):
                request.serializationQueue.async {
                    let result = serialize(data)
                    request.underlyingQueue.async {
                        if let monitor = request.monitor() {
                            let reported = result.mapError {
                                $0.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: $0)))
                            }
                            monitor.request(request, didParseStream: reported)
                        }
                        if case .failure = result, request.automaticallyCancelOnStreamError { request.cancel() }
                        queue.async { deliver(Stream(event: .stream(result), token: CancellationToken(request)), receipt) }
                    }
                }
            }
        }
        streamState.withLock { $0.addHandler(parser) }
        appendStreamCompletion(on: delivery.queue, complete: complete)
    }

    /// Adds the serializer that, once the request has finished, delivers the completion on `queue`
    /// after every chunk already handed to the stream handlers has been handled.
    private func appendStreamCompletion<Success, Failure>(
        on queue: DispatchQueue?, complete: @escaping @Sendable (Stream<Success, Failure>) -> Void
    ) {
        appendResponseSerializer {
            self.responseSerializerDidComplete {
                let enqueue: @Sendable () -> Void = {
                    let completing: @Sendable () -> Void = {
                        let outcome = self.outcome
                        let completion = Completion(
                            request: outcome.request, response: outcome.response, metrics: outcome.metrics, error: outcome.error)
                        complete(Stream(event: .complete(completion), token: CancellationToken(self)))
                    }
                    if let queue { queue.async(execute: completing) } else { completing() }
                }
                if self.streamState.withLock({ $0.completionReady(enqueue) }) { enqueue() }
            }
        }
    }
}

/// What a consumer reports about one chunk it was given: that it was delivered (completions wait for
/// every chunk to be) and that its bytes are no longer held (back-pressure). A handler reports both
/// once it has run; an async stream reports delivery as it yields, and the release once its consumer
/// takes the element, so a consumer that is not iterating holds the request back but never keeps
/// another iteration's completion from coming.
struct ChunkReceipt: Sendable {
    let request: DataStreamRequest
    let bytes: Int

    func handled() { request.consumerHandled(bytes: bytes, executing: true) }
    func delivered() { request.consumerHandled(bytes: 0, executing: true) }
    func released() { request.consumerHandled(bytes: bytes, executing: false) }
}

// MARK: - Serialization

/// A type which can serialize incoming `Data`.
public protocol DataStreamSerializer: Sendable {
    /// Type produced from the serialized `Data`.
    associatedtype SerializedObject

    /// Serializes incoming `Data` into a `SerializedObject` value.
    ///
    /// - Parameter data: `Data` to be serialized.
    /// - Throws: Any error produced during serialization.
    func serialize(_ data: Data) throws -> SerializedObject
}

/// `DataStreamSerializer` which uses the provided `DataPreprocessor` and `DataDecoder` to serialize the incoming `Data`.
public struct DecodableStreamSerializer<T: Decodable>: DataStreamSerializer {
    /// `DataDecoder` used to decode incoming `Data`.
    public let decoder: any DataDecoder
    /// `DataPreprocessor` incoming `Data` is passed through before being passed to the `DataDecoder`.
    public let dataPreprocessor: any DataPreprocessor

    /// Creates an instance with the provided `DataDecoder` and `DataPreprocessor`.
    ///
    /// - Parameters:
    ///   - decoder:          `DataDecoder` used to decode incoming `Data`. `JSONDecoder()` by default.
    ///   - dataPreprocessor: `DataPreprocessor` used to process incoming `Data` before it's passed through the
    ///                       `decoder`. `PassthroughPreprocessor()` by default.
    public init(decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()) {
        self.decoder = decoder
        self.dataPreprocessor = dataPreprocessor
    }

    /// Preprocesses `data` and decodes a `T` from it; a decoding failure throws
    /// ``AFError/responseSerializationFailed(reason:)``.
    public func serialize(_ data: Data) throws -> T {
        let processedData = try dataPreprocessor.preprocess(data)
        do {
            return try decoder.decode(T.self, from: processedData)
        } catch {
            throw AFError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

/// `DataStreamSerializer` which performs no serialization on incoming `Data`.
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// Creates an instance.
    public init() {}

    /// Returns `data` unchanged.
    public func serialize(_ data: Data) throws -> Data { data }
}

/// `DataStreamSerializer` which serializes incoming stream `Data` into `UTF8`-decoded `String` values.
public struct StringStreamSerializer: DataStreamSerializer {
    /// Creates an instance.
    public init() {}

    /// Returns `data` decoded as UTF-8, with invalid sequences replaced.
    public func serialize(_ data: Data) throws -> String {
        String(decoding: data, as: UTF8.self)
    }
}

extension DataStreamSerializer {
    /// Creates a `DecodableStreamSerializer` instance with the provided `DataDecoder` and `DataPreprocessor`.
    ///
    /// - Parameters:
    ///   - type:             `Decodable` type to decode from stream data.
    ///   - decoder:          `DataDecoder` used to decode incoming `Data`. `JSONDecoder()` by default.
    ///   - dataPreprocessor: `DataPreprocessor` used to process incoming `Data` before it's passed through the
    ///                       `decoder`. `PassthroughPreprocessor()` by default.
    public static func decodable<T: Decodable>(
        of type: T.Type, decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> Self where Self == DecodableStreamSerializer<T> {
        DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: dataPreprocessor)
    }
}

extension DataStreamSerializer where Self == PassthroughStreamSerializer {
    /// Provides a `PassthroughStreamSerializer` instance.
    public static var passthrough: PassthroughStreamSerializer { PassthroughStreamSerializer() }
}

extension DataStreamSerializer where Self == StringStreamSerializer {
    /// Provides a `StringStreamSerializer` instance.
    public static var string: StringStreamSerializer { StringStreamSerializer() }
}
