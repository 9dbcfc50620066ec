import AFSynchronization
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C while a transfer runs: SIGINT is caught (not fatal) and `handler` runs on `queue`, once.
/// ``stop()`` gives SIGINT back its default action.
final class Interruption {
    /// Whether SIGINT came, shared with the signal handler.
    private final class Flag: Sendable {
        let raised = Mutex(false)
    }

    private let source: any DispatchSourceSignal
    private let flag = Flag()

    init(on queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: queue)
        source.setEventHandler { [flag] in
            let first = flag.raised.withLock { raised in
                defer { raised = true }
                return !raised
            }
            if first { handler() }
        }
        source.resume()
    }

    /// Whether SIGINT came.
    var happened: Bool { flag.raised.withLock { $0 } }

    /// Stops catching SIGINT.
    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
