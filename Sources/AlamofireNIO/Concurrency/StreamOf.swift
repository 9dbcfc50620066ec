/// An asynchronous sequence generated from an underlying `AsyncStream`. Only produced by Alamofire.
///
/// The stream starts when it is iterated: that is when the request's handler is registered.
public struct StreamOf<Element>: AsyncSequence {
    public typealias AsyncIterator = Iterator
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy
    typealias Continuation = AsyncStream<Element>.Continuation

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: (@Sendable () -> Void)?
    private let onElement: (@Sendable () -> Void)?
    private let builder: @Sendable (Continuation) -> Void

    /// - Parameter onElement: called each time the iterator hands out an element (a stream request
    ///   counts what its consumer has taken, for back-pressure).
    init(
        bufferingPolicy: BufferingPolicy = .unbounded, onTermination: (@Sendable () -> Void)? = nil,
        onElement: (@Sendable () -> Void)? = nil, builder: @escaping @Sendable (Continuation) -> Void
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.onElement = onElement
        self.builder = builder
    }

    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        if let onTermination { continuation.onTermination = { _ in onTermination() } }
        builder(continuation)
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

        public mutating func next() async -> Element? {
            let element = await iterator.next()
            if element != nil { onElement?() }
            return element
        }
    }
}

extension StreamOf: Sendable where Element: Sendable {}
