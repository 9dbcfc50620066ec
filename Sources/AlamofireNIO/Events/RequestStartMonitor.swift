/// An ``EventMonitor`` that is also told, on the thread that starts a request, that it is starting
/// (AlamofireNIO's, not Alamofire's).
///
/// Every other event reaches a monitor later, on its ``EventMonitor/queue``, where the starting
/// task's task-local values are gone. A monitor that needs them, such as a tracer taking the
/// caller's `ServiceContext` as a span's parent, adopts this protocol: ``requestWillStart(_:)`` runs
/// synchronously on the thread that first resumes the request (by `resume()`, by adding the first
/// response handler, or by creating it with eager setup), before any other event of the request,
/// unless it was cancelled first. Keep it short: the caller waits for it.
public protocol RequestStartMonitor: EventMonitor {
    /// `request` is about to be set up; called once per request, on the thread that starts it.
    func requestWillStart(_ request: Request)
}
