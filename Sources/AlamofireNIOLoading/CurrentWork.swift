/// Which piece of work (an exchange, a body being written, a WebSocket being read) is a loading
/// task's current one, and how to stop it, as a value. Each piece started gets a new generation, so
/// that a piece reporting how to stop it late, once newer work has started (a fast exchange may
/// already have led to the next hop), is not kept.
struct CurrentWork {
    /// The generation of the newest piece of work.
    private(set) var generation = 0
    /// Stops the current piece of work, once it has said how.
    private(set) var cancel: (@Sendable () -> Void)?

    /// A new piece of work starts: returns its generation. The last piece's way to stop is forgotten,
    /// so nothing stops the wrong piece before the new one has said how.
    mutating func start() -> Int {
        generation += 1
        cancel = nil
        return generation
    }

    /// Keeps how to stop the piece of work of `generation`; false, keeping nothing, when newer work
    /// has started since.
    mutating func setCancel(_ cancel: @escaping @Sendable () -> Void, for generation: Int) -> Bool {
        guard generation == self.generation else { return false }
        self.cancel = cancel
        return true
    }

    /// Nothing more will run: forgets how to stop it (and what that held).
    mutating func end() {
        cancel = nil
    }
}
