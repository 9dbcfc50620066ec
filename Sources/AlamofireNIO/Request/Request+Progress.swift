import AFSynchronization
public import Foundation
import Synchronization

/// One direction of a request's transfer: the latest counts and who wants to hear of them.
struct TransferProgress {
    var handler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var completed: Int64 = 0
    /// -1 while unknown, as URLSession reports it.
    var total: Int64 = 0
    /// A delivery is queued on the handler's queue; later counts ride along with it.
    var deliveryPending = false

    /// Back to nothing transferred, for a retry; the handler stays.
    mutating func reset() {
        completed = 0
        total = 0
    }
}

/// Which way bytes are moving.
enum TransferDirection: Sendable {
    case upload
    case download
}

extension Request.MutableState {
    subscript(progress direction: TransferDirection) -> TransferProgress {
        get { direction == .upload ? uploadProgressState : downloadProgressState }
        set {
            if direction == .upload { uploadProgressState = newValue } else { downloadProgressState = newValue }
        }
    }
}

extension Request {
    /// Calls `closure` on `queue` whenever more of the body has been sent.
    @discardableResult
    @preconcurrency public func uploadProgress(queue: DispatchQueue = .main, closure: @escaping ProgressHandler) -> Self {
        mutableState.withLock { $0.uploadProgressState.handler = (closure, queue) }
        return self
    }

    /// Calls `closure` on `queue` whenever more of the response body has arrived.
    @discardableResult
    @preconcurrency public func downloadProgress(queue: DispatchQueue = .main, closure: @escaping ProgressHandler) -> Self {
        mutableState.withLock { $0.downloadProgressState.handler = (closure, queue) }
        return self
    }

    private func progress(for direction: TransferDirection) -> Progress {
        direction == .upload ? uploadProgress : downloadProgress
    }

    /// Records the counts the transport reports (from an event loop). With a handler, the `Progress`
    /// is updated on the handler's queue just before the handler runs, so the two never race, and
    /// at most one delivery waits there at a time: a slow handler sees the latest counts, not a
    /// backlog. Without one, the `Progress` is updated at once.
    func updateProgress(_ direction: TransferDirection, completed: Int64, total: Int64?) {
        enum Step {
            case none
            case updateNow
            case deliver(handler: ProgressHandler, queue: DispatchQueue)
        }
        let progress = progress(for: direction)
        let step = mutableState.withLock { state -> Step in
            state[progress: direction].completed = completed
            state[progress: direction].total = total ?? -1
            guard let handler = state[progress: direction].handler else { return .updateNow }
            guard !state[progress: direction].deliveryPending else { return .none }
            state[progress: direction].deliveryPending = true
            return .deliver(handler: handler.handler, queue: handler.queue)
        }
        let delivery: (handler: ProgressHandler, queue: DispatchQueue)
        switch step {
        case .none:
            return
        case .updateNow:
            // Outside the lock: `Progress` takes locks of its own and may call observers.
            progress.set(completed: completed, total: total ?? -1)
            return
        case .deliver(let handler, let queue):
            delivery = (handler, queue)
        }
        delivery.queue.async {
            let (completed, total) = self.mutableState.withLock { state in
                state[progress: direction].deliveryPending = false
                return (state[progress: direction].completed, state[progress: direction].total)
            }
            progress.set(completed: completed, total: total)
            delivery.handler(progress)
        }
    }

    /// Back to nothing transferred, for a retry, as Alamofire resets its `Progress`es (no handler is
    /// called). With a handler the `Progress` is reset on the handler's queue, where it is updated.
    func resetProgress() {
        for direction in [TransferDirection.upload, .download] {
            let handlerQueue = mutableState.withLock { state in
                state[progress: direction].reset()
                return state[progress: direction].handler?.queue
            }
            let progress = progress(for: direction)
            let reset: @Sendable () -> Void = { progress.set(completed: 0, total: 0) }
            if let handlerQueue { handlerQueue.async(execute: reset) } else { reset() }
        }
    }

    /// Without a `Content-Length` the total is unknown and progress stays at 0 until the body has
    /// arrived; then it jumps to 1, as Alamofire documents.
    func completeUnknownDownloadProgress() {
        let completed = mutableState.withLock { state -> Int64? in
            let download = state.downloadProgressState
            return download.total < 0 && download.completed > 0 ? download.completed : nil
        }
        if let completed { updateProgress(.download, completed: completed, total: completed) }
    }
}

extension Progress {
    /// Sets both counts. A known total that drops to 0 goes through "unknown" first: corelibs'
    /// `Progress` traps when a positive total is set straight to 0.
    func set(completed: Int64, total: Int64) {
        if total == 0, totalUnitCount > 0 {
            completedUnitCount = 0
            totalUnitCount = -1
        }
        totalUnitCount = total
        completedUnitCount = completed
    }
}
