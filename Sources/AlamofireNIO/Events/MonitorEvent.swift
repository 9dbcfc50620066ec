import AFSynchronization
import Synchronization

/// Each of ``EventMonitor``'s events, in the protocol's order, so that an event a monitor leaves to
/// the protocol's empty default can be skipped.
///
/// A monitor that implements one event (`requestDidFinish`, say) would otherwise have all of a
/// request's events sent to its queue and made for it, among them `didReceive response`, which
/// makes the request's `HTTPURLResponse` (the most expensive step of a small request on Linux).
/// Each empty default records its event for the monitor's type the first time it runs (see
/// ``DefaultedMonitorEvents``); from then on ``CompositeEventMonitor`` sends that event to monitors
/// of that type no more. Skipping a call that does nothing is not observable: the events a monitor
/// implements still arrive, in the same order, on its queue.
enum MonitorEvent: UInt8, CaseIterable {
    case didBecomeInvalid
    case taskDidReceiveChallenge
    case taskDidSendBodyData
    case taskNeedsNewBodyStream
    case taskWillPerformHTTPRedirection
    case taskDidFinishCollectingMetrics
    case taskDidComplete
    case taskIsWaitingForConnectivity
    case dataTaskDidReceiveResponse
    case dataTaskDidReceiveData
    case dataTaskWillCacheResponse
    case downloadTaskDidResumeAtOffset
    case downloadTaskDidWriteData
    case downloadTaskDidFinishDownloading
    case requestDidCreateInitialURLRequest
    case requestDidFailToCreateURLRequest
    case requestDidAdaptInitialRequest
    case requestDidFailToAdaptURLRequest
    case requestDidCreateURLRequest
    case requestDidCreateTask
    case requestDidGatherMetrics
    case requestDidFailTaskEarly
    case requestDidCompleteTask
    case requestIsRetrying
    case requestDidFinish
    case requestDidResume
    case requestDidResumeTask
    case requestDidSuspend
    case requestDidSuspendTask
    case requestDidCancel
    case requestDidCancelTask
    case dataRequestDidValidate
    case dataRequestDidParseData
    case dataRequestDidParseResponse
    case streamRequestDidValidate
    case streamRequestDidParseStream
    case uploadRequestDidCreateUploadable
    case uploadRequestDidFailToCreateUploadable
    case uploadRequestDidProvideInputStream
    case downloadRequestDidFinishDownloading
    case downloadRequestDidCreateDestinationURL
    case downloadRequestDidValidate
    case downloadRequestDidParseURL
    case downloadRequestDidParseResponse

    /// The event's bit in a set of events (there are fewer than 64).
    var bit: UInt64 { 1 << UInt64(rawValue) }
}

/// The events each monitor type leaves to ``EventMonitor``'s empty defaults, learned as the defaults
/// run: a protocol's witness for a type never changes, so once a type's default for an event has
/// run, every later call would run it too.
enum DefaultedMonitorEvents {
    private static let byType = Mutex<[ObjectIdentifier: UInt64]>([:])
    /// Counts the events learned, so that a reader can tell, without the lock, that nothing changed.
    private static let learned = Atomic<UInt64>(0)

    /// How many events have been learned so far, for any type: when it has not moved since a monitor's
    /// events were last read, they have not changed.
    static var generation: UInt64 { learned.load(ordering: .acquiring) }

    /// Records that monitors of `type` leave `event` to the default.
    static func record(_ event: MonitorEvent, for type: any EventMonitor.Type) {
        byType.withLock { byType in
            let known = byType[ObjectIdentifier(type), default: 0]
            guard known & event.bit == 0 else { return }
            byType[ObjectIdentifier(type)] = known | event.bit
            learned.add(1, ordering: .releasing)
        }
    }

    /// The events, as bits, that monitors of `monitor`'s type are known to leave to the defaults.
    static func events(of monitor: any EventMonitor) -> UInt64 {
        let key = ObjectIdentifier(type(of: monitor))
        return byType.withLock { $0[key] ?? 0 }
    }
}

extension EventMonitor {
    /// Called by the empty defaults: this monitor's type leaves `event` to them.
    func leftToDefault(_ event: MonitorEvent) {
        DefaultedMonitorEvents.record(event, for: type(of: self))
    }
}
