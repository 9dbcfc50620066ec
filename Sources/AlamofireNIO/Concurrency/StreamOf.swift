/// An asynchronous sequence generated from an underlying `AsyncStream`. Only produced by Alamofire.
///
/// The stream starts when it is iterated: that is when the request's handler is registered.
public struct StreamOf<Element>: AsyncSequence {
    /// The iterator type of the sequence.
    public typealias AsyncIterator = Iterator
    /// How the underlying `AsyncStream` buffers elements that have not yet been consumed.
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy
    typealias Continuation = AsyncStream<Element>.Continuation

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: (@Sendable () -> Void)?
    /// Starts one iteration: feeds `continuation` and returns what to call each time the iterator
    /// hands out an element, if anything.
    private let builder: @Sendable (Continuation) -> (@Sendable () -> Void)?

    init(
        bufferingPolicy: BufferingPolicy = .unbounded, onTermination: (@Sendable () -> Void)? = nil,
        builder: @escaping @Sendable (Continuation) -> Void
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = { continuation in
            builder(continuation)
            return nil
        }
    }

    /// A stream each of whose iterations gets its own state from `iteration`, which feeds the
    /// continuation (setting its `onTermination` as it needs) and returns what to call each time the
    /// iterator hands out an element (a stream request counts what its consumer has taken, for
    /// back-pressure).
    init(eachIteration iteration: @escaping @Sendable (Continuation) -> (@Sendable () -> Void)?, bufferingPolicy: BufferingPolicy) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = nil
        self.builder = iteration
    }

    /// Starts a new iteration of the stream and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        if let onTermination { continuation.onTermination = { _ in onTermination() } }
        let onElement = builder(continuation)
        return Iterator(iterator: stream.makeAsyncIterator(), onElement: onElement)
    }

    /// The iterator of a ``StreamOf``.
    public struct Iterator: AsyncIteratorProtocol {
        private var iterator: AsyncStream<Element>.AsyncIterator
        private let onElement: (@Sendable () -> Void)?

        init(iterator: AsyncStream<Element>.AsyncIterator, onElement: (@Sendable () -> Void)?) {
            self.iterator = iterator
            self.onElement = onElement
        }

        /// Returns the next element, or `nil` when the stream has finished.
        public mutating func next() async -> Element? {
            let element = await iterator.next()
            if element != nil { onElement?() }
            return element
        }
    }
}

extension StreamOf: Sendable where Element: Sendable {}
