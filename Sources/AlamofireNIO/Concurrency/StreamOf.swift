/// An asynchronous sequence generated from an underlying `AsyncStream`. Only produced by Alamofire.
///
/// The stream starts when it is iterated: that is when the request's handler is registered.
public struct StreamOf<Element>: AsyncSequence {
    public typealias AsyncIterator = Iterator
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy
    typealias Continuation = AsyncStream<Element>.Continuation

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: (@Sendable () -> Void)?
    private let builder: @Sendable (Continuation) -> Void

    init(
        bufferingPolicy: BufferingPolicy = .unbounded, onTermination: (@Sendable () -> Void)? = nil,
        builder: @escaping @Sendable (Continuation) -> Void
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = builder
    }

    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        if let onTermination { continuation.onTermination = { _ in onTermination() } }
        builder(continuation)
        return Iterator(iterator: stream.makeAsyncIterator())
    }

    /// The iterator of a ``StreamOf``.
    public struct Iterator: AsyncIteratorProtocol {
        private var iterator: AsyncStream<Element>.AsyncIterator

        init(iterator: AsyncStream<Element>.AsyncIterator) {
            self.iterator = iterator
        }

        public mutating func next() async -> Element? {
            await iterator.next()
        }
    }
}

extension StreamOf: Sendable where Element: Sendable {}
