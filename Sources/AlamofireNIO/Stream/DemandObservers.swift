/// Who waits for a request's loading task to start waiting for its consumers: the rule behind
/// `whenAwaitingDemand(_:)` of stream and WebSocket requests, kept under the request's lock.
///
/// An observer added while the task waits runs at once; one added before is kept, and handed back
/// (to run outside the lock) when the task parks. Once the request has ended the task will not wait
/// again: observers are let go, as each may hold the request, and later ones are not kept. The
/// request's own state says whether the task waits and whether the request has ended.
struct DemandObservers {
    private var waiting: [@Sendable () -> Void] = []

    /// `observer`, to run now, when the task `isAwaitingDemand`; otherwise nil, and it is kept for
    /// ``taskParked()`` (unless the request `hasEnded`: it would never run).
    mutating func add(
        _ observer: @escaping @Sendable () -> Void, isAwaitingDemand: Bool, hasEnded: Bool
    ) -> (@Sendable () -> Void)? {
        if isAwaitingDemand { return observer }
        if !hasEnded { waiting.append(observer) }
        return nil
    }

    /// The task has parked: the observers to run now, no longer kept.
    mutating func taskParked() -> [@Sendable () -> Void] {
        defer { waiting.removeAll() }
        return waiting
    }

    /// The request has ended: the observers kept are let go.
    mutating func requestEnded() {
        waiting.removeAll()
    }

    /// How many observers are kept.
    var count: Int { waiting.count }
}
