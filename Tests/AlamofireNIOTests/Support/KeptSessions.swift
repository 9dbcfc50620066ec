import AFSynchronization
import AlamofireNIO
import Synchronization

/// Sessions made inline by tests (`keepAlive(Session()).request(...)`), kept alive until the process ends:
/// as in Alamofire, a Session released while its requests run finishes them with
/// `.sessionDeinitialized` (SessionReleaseTests covers that).
private let keptSessions = Mutex<[Session]>([])

/// Keeps `session` alive for the rest of the test process and returns it.
func keepAlive<S: Session>(_ session: S) -> S {
    keptSessions.withLock { $0.append(session) }
    return session
}
