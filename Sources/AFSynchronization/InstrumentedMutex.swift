public import CThreadSanitizer
public import Synchronization

/// Synchronization's `Mutex`, with its locking shown to ThreadSanitizer.
///
/// On Linux, `Mutex` locks with futex calls inside the standard library, which ThreadSanitizer does
/// not instrument: it sees the accesses inside `withLock` and not the lock that orders them, so it
/// reports correct code as racing. This wrapper tells it, through its annotation functions, that
/// the thread holding the lock acquires what the mutex guards and releases it before unlocking.
/// Without the TSan runtime (an ordinary build) the annotations are null and cost a branch each.
///
/// The package's modules name it `Mutex` (a typealias each), so their code reads as with
/// Synchronization's.
public struct InstrumentedMutex<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    /// A mutex guarding `value`.
    @inlinable
    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value while holding the lock, as `Mutex.withLock` does.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The wrapper's own address names what it guards: taking the value's address would itself be
        // an access ThreadSanitizer sees before the acquire.
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            cthreadsanitizer_acquire(address)
            defer { cthreadsanitizer_release(address) }
            return try body(&value)
        }
    }
}
