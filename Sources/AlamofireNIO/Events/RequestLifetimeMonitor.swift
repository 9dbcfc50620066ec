/// An ``EventMonitor`` that is also told when a request starts, on the thread that starts it, and
/// when it has ended for good (AlamofireNIO's, not Alamofire's).
///
/// Every other event reaches a monitor later, on its ``EventMonitor/queue``, where the starting
/// task's task-local values are gone. A monitor that needs them, such as a tracer taking the
/// caller's `ServiceContext` as a span's parent, adopts this protocol: ``requestWillStart(_:)`` runs
/// synchronously on the thread that first resumes the request (by `resume()`, by adding the first
/// response handler, or by creating it with eager setup), before any other event of the request,
/// unless it was cancelled or finished first. Keep it short: the caller waits for it.
///
/// `requestDidFinish(_:)` can come more than once: a response serializer may retry a finished
/// request. ``requestDidEnd(_:)`` comes on ``EventMonitor/queue`` after the request's other events,
/// once it has finished and every response serializer has run; again only if a serializer added
/// later retries the request.
public protocol RequestLifetimeMonitor: EventMonitor {
    /// `request` is about to be set up; called once per request, on the thread that starts it.
    func requestWillStart(_ request: Request)

    /// `request` has finished and all its response serializers have run; called once, on ``EventMonitor/queue``.
    func requestDidEnd(_ request: Request)
}

extension RequestLifetimeMonitor {
    /// Does nothing.
    public func requestWillStart(_ request: Request) {}

    /// Does nothing.
    public func requestDidEnd(_ request: Request) {}
}
