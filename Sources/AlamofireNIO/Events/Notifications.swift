import AFSynchronization
public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension Request {
    /// Posted when a `Request` is resumed. The `Notification` contains the resumed `Request`.
    public static let didResumeNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didResume")
    /// Posted when a `Request` is suspended. The `Notification` contains the suspended `Request`.
    public static let didSuspendNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didSuspend")
    /// Posted when a `Request` is cancelled. The `Notification` contains the cancelled `Request`.
    public static let didCancelNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didCancel")
    /// Posted when a `Request` is finished. The `Notification` contains the completed `Request`.
    public static let didFinishNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didFinish")
    /// Posted when a `URLSessionTask` is resumed. The `Notification` contains the `Request` associated with the `URLSessionTask`.
    public static let didResumeTaskNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didResumeTask")
    /// Posted when a `URLSessionTask` is suspended. The `Notification` contains the `Request` associated with the `URLSessionTask`.
    public static let didSuspendTaskNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didSuspendTask")
    /// Posted when a `URLSessionTask` is cancelled. The `Notification` contains the `Request` associated with the `URLSessionTask`.
    public static let didCancelTaskNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didCancelTask")
    /// Posted when a `URLSessionTask` is completed. The `Notification` contains the `Request` associated with the `URLSessionTask`.
    public static let didCompleteTaskNotification = Notification.Name(rawValue: "org.alamofire.notification.name.request.didCompleteTask")
}

extension Request {
    /// The `userInfo` of the request's notifications. It holds the request, so it is kept only
    /// while the request is under way (set up and not yet finishing, so that a finish follows):
    /// made at the first post then and shared by the later ones (four on a plain request), it is
    /// let go when the request posts `didFinishNotification`, at any post once the request is
    /// finishing, and at clean-up. A post outside that span (a suspend before the first resume, a
    /// cancel during serialization) gets a dictionary of its own.
    func notificationUserInfo(finishing: Bool) -> [AnyHashable: Any] {
        mutableState.withLock { state in
            let keeps = !finishing && state.machine.isUnderWay
            if let kept = state.notificationUserInfo {
                if !keeps { state.notificationUserInfo = nil }
                return kept
            }
            let made: [AnyHashable: Any] = [requestKey: self]
            if keeps { state.notificationUserInfo = made }
            return made
        }
    }
}

extension Notification {
    /// The `Request` contained by the instance's `userInfo`, `nil` otherwise.
    public var request: Request? {
        userInfo?[requestKey] as? Request
    }
}

/// The `userInfo` key under which notifications carry their `Request`, as Alamofire spells it.
private let requestKey = "org.alamofire.notification.key.request"

/// `EventMonitor` that provides Alamofire's notifications: `Request.didResumeNotification` and the
/// others, posted to `NotificationCenter.default` with the request in `userInfo` (read it with
/// `notification.request`).
///
/// Unlike Alamofire, which posts them on the main queue, a session posts them at once, on the thread
/// where the event happens (one of AlamofireNIO's event loops, or the session's root queue): a
/// server or tool whose main queue never runs does not pile them up, and a request pays no thread
/// hop for them. Observe with a queue (`addObserver(forName:object:queue:using:)`) to get them
/// elsewhere; an observer without one must return quickly.
public final class AlamofireNotifications: EventMonitor {
    /// Where the notifications are posted when this monitor is called directly (a session posts
    /// them at once instead): one serial queue shared by every instance.
    public var queue: DispatchQueue { Self.postingQueue }

    private static let postingQueue = DispatchQueue(label: "org.alamofire.notifications")

    /// Creates an instance.
    public init() {}

    /// Posts `name` with `request` in its `userInfo`.
    func post(_ name: Notification.Name, for request: Request) {
        let userInfo = request.notificationUserInfo(finishing: name == Request.didFinishNotification)
        NotificationCenter.default.post(name: name, object: nil, userInfo: userInfo)
    }

    /// Called when `resume()` is called on a request: posts `Request.didResumeNotification`.
    public func requestDidResume(_ request: Request) { post(Request.didResumeNotification, for: request) }
    /// Called when `suspend()` is called on a request: posts `Request.didSuspendNotification`.
    public func requestDidSuspend(_ request: Request) { post(Request.didSuspendNotification, for: request) }
    /// Called when `cancel()` is called on a request: posts `Request.didCancelNotification`.
    public func requestDidCancel(_ request: Request) { post(Request.didCancelNotification, for: request) }
    /// Called when a request finishes and its response serializers are about to run: posts `Request.didFinishNotification`.
    public func requestDidFinish(_ request: Request) { post(Request.didFinishNotification, for: request) }
    /// Called when a request's task is resumed: posts `Request.didResumeTaskNotification`.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) { post(Request.didResumeTaskNotification, for: request) }
    /// Called when a request's task is suspended: posts `Request.didSuspendTaskNotification`.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) { post(Request.didSuspendTaskNotification, for: request) }
    /// Called when a request's task is cancelled: posts `Request.didCancelTaskNotification`.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) { post(Request.didCancelTaskNotification, for: request) }
    /// Called when a request's task completes, possibly with an error (once per attempt): posts
    /// `Request.didCompleteTaskNotification`.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        post(Request.didCompleteTaskNotification, for: request)
    }
}
