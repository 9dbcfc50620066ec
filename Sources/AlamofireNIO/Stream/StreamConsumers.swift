import Foundation

/// How a ``DataStreamRequest``'s chunks reach its consumers, as a value: each event returns what
/// the request does next, after releasing its lock (the handlers to call, the completions to run,
/// the waiting loading task to resume).
///
/// Two counts carry the rules:
/// - **Chunks being handled.** Every chunk goes to every stream handler, and a handler reports when
///   it has run. A completion (a stream's `.complete` event) waits until no chunk is being handled,
///   so it always comes after the last chunk, as in Alamofire.
/// - **Bytes held.** Bytes handed to consumers (handlers and the `InputStream`) and not yet handled.
///   Above `maximumBufferedBytes` the loading task waits (it stops reading the response) until the
///   consumers catch up, or the request ends.
///
/// Generic over what waits (a continuation in the request, any value in tests).
struct StreamConsumers<Waiter> {
    /// Given each chunk, one per stream handler.
    private(set) var handlers: [@Sendable (Data) -> Void] = []
    /// The `InputStream` of `asInputStream(bufferSize:)`, if asked for.
    private(set) var inputStream: DataStreamInputStream?
    /// Chunks handed to stream handlers and not yet handled.
    private(set) var chunksBeingHandled = 0
    /// Bytes handed to consumers and not yet handled.
    private(set) var bufferedBytes = 0
    /// Whether the request has ended (with `endError`): an input stream asked for later ends at once.
    private(set) var hasEnded = false
    private(set) var endError: AFError?
    private var heldCompletions: [@Sendable () -> Void] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    /// Run the next time the loading task parks (see ``whenAwaitingDemand(_:)``).
    private var demandObservers = DemandObservers()
    let maximumBufferedBytes: Int

    init(maximumBufferedBytes: Int) {
        self.maximumBufferedBytes = maximumBufferedBytes
    }

    /// Whether the loading task is waiting for the consumers to catch up.
    var isAwaitingDemand: Bool { !waiters.isEmpty }

    /// `observer`, to run now, when the loading task is waiting; otherwise it is kept and
    /// ``park(_:ticket:isCancelled:)`` hands it back once the task parks.
    mutating func whenAwaitingDemand(_ observer: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        demandObservers.add(observer, isAwaitingDemand: isAwaitingDemand, hasEnded: hasEnded)
    }

    mutating func addHandler(_ handler: @escaping @Sendable (Data) -> Void) {
        handlers.append(handler)
    }

    /// The request's input stream: the one made before, or `make()`'s, kept.
    mutating func inputStream(making make: () -> DataStreamInputStream) -> DataStreamInputStream {
        if let inputStream { return inputStream }
        let made = make()
        inputStream = made
        return made
    }

    /// A chunk of `bytes` arrived: every handler and the input stream take it. Returns them.
    mutating func chunkArrived(bytes: Int) -> (handlers: [@Sendable (Data) -> Void], inputStream: DataStreamInputStream?) {
        chunksBeingHandled += handlers.count
        bufferedBytes += bytes * (handlers.count + (inputStream == nil ? 0 : 1))
        return (handlers, inputStream)
    }

    /// A consumer is done with `bytes` of one chunk (`byHandler`: a stream handler has run). Returns
    /// the completions that may now run and the waiters to resume.
    mutating func consumerHandled(bytes: Int, byHandler: Bool) -> (completions: [@Sendable () -> Void], resume: [Waiter]) {
        if byHandler { chunksBeingHandled -= 1 }
        bufferedBytes -= bytes
        var completions: [@Sendable () -> Void] = []
        if chunksBeingHandled == 0 { swap(&completions, &heldCompletions) }
        return (completions, bufferedBytes <= maximumBufferedBytes ? takeWaiters() : [])
    }

    /// A stream's completion is ready: true when it may run now, false when it is held until the
    /// chunks being handled are (``consumerHandled(bytes:byHandler:)`` returns it then).
    mutating func completionReady(_ completion: @escaping @Sendable () -> Void) -> Bool {
        guard chunksBeingHandled > 0 else { return true }
        heldCompletions.append(completion)
        return false
    }

    /// The request ended, with `error` if it failed. Returns the input stream to finish and the
    /// waiters to resume.
    mutating func ended(error: AFError?) -> (inputStream: DataStreamInputStream?, resume: [Waiter]) {
        hasEnded = true
        endError = error
        demandObservers.requestEnded()
        return (inputStream, takeWaiters())
    }

    /// Whether the loading task must wait for demand: a ticket for ``park(_:ticket:isCancelled:)``, or
    /// nil when the consumers hold little enough.
    mutating func demandTicket() -> Int? {
        guard bufferedBytes > maximumBufferedBytes else { return nil }
        defer { nextWaiter += 1 }
        return nextWaiter
    }

    /// Parks `waiter` until demand returns: `parked` is false (resume it now) when demand already
    /// has, or the waiting task was cancelled first (its cancellation has already run and would not
    /// resume it). `observers` are those of ``whenAwaitingDemand(_:)`` to run now.
    mutating func park(_ waiter: Waiter, ticket: Int, isCancelled: Bool) -> (parked: Bool, observers: [@Sendable () -> Void]) {
        guard bufferedBytes > maximumBufferedBytes, !isCancelled else { return (false, []) }
        waiters[ticket] = waiter
        return (true, demandObservers.taskParked())
    }

    /// The waiting task of `ticket` was cancelled: its waiter, to resume, if still parked.
    mutating func unpark(ticket: Int) -> Waiter? {
        waiters.removeValue(forKey: ticket)
    }

    private mutating func takeWaiters() -> [Waiter] {
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }
}
