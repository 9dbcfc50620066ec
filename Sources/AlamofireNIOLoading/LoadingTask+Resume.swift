import AFSynchronization
import AlamofireNIOTransport
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a download continues from a ``DownloadResumption`` and leaves one behind: the range it asks
/// for, what it makes of the answer, and what becomes of its partial file when it ends without
/// success (kept for resume data, or removed). Which file is whose is ``DownloadFileState``'s to
/// say; these methods do the file operations it decides on, outside the task's lock.
extension LoadingTask {
    /// The `URLError` user-info key under which URLSession puts a failed download's resume data.
    package static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"

    /// Asks for the rest of a partial file: adds `Range` and `If-Range` to `request` and returns the
    /// resumption, or, when the file is gone or shorter than it says, forgets it (the body then
    /// starts over) and returns nil.
    func continueDownload(from resumption: DownloadResumption, on request: inout URLRequest) -> DownloadResumption? {
        // The partial file is taken under a new name, so the same resume data cannot write into it twice.
        var resumption = resumption
        let taken = DownloadFile.temporaryURL(in: resumption.file.deletingLastPathComponent())
        guard let validator = resumption.ifRange, let size = DownloadFile.size(of: resumption.file), size >= resumption.offset,
            (try? FileManager.default.moveItem(at: resumption.file, to: taken)) != nil
        else {
            state.withLock { $0.download.forget(resumption) }
            return nil
        }
        let original = resumption.file
        resumption.file = taken
        state.withLock { [resumption] in $0.download.took(resumption, from: original) }
        request.setValue("bytes=\(resumption.offset)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        return resumption
    }

    /// A continued request got a `416` or another range: its partial file goes and the request is
    /// sent again without a range.
    func askAgainWithoutRange(recording transaction: TransactionMetrics) {
        let (action, file) = state.withLock { state in
            state.log.record(transaction)
            return (state.machine.restartRequested(), state.download.rangeRefused())
        }
        if let file { try? FileManager.default.removeItem(at: file) }
        perform(action)
    }

    /// Decides where the final response's body goes (called once, as it starts; see
    /// ``DownloadFileState/plan(for:streamed:restoredUserFile:request:newFile:)``). An error answer
    /// (a `404`, a `503`) to a request continuing the user's resume data first gives its partial
    /// file back under the name that data gives it, so the data can continue it later.
    func downloadPlan(for response: URLResponse?, streamed: Bool, directory: URL) -> DownloadFileState.Plan {
        let http = response as? HTTPURLResponse
        let restored = restorePartialFile(ifRefusedBy: http, streamed: streamed)
        return state.withLock { state in
            let plan = state.download.plan(
                for: http, streamed: streamed, restoredUserFile: restored, request: state.request.current,
                newFile: { DownloadFile.temporaryURL(in: directory) })
            state.counts.resumed(at: plan.offset ?? 0)
            return plan
        }
    }

    /// Gives the partial file of the user's resume data its name back when the final response is an
    /// error (not 2xx), so the body goes to a new file; returns whether it did.
    private func restorePartialFile(ifRefusedBy response: HTTPURLResponse?, streamed: Bool) -> Bool {
        guard streamed, let status = response?.statusCode, !(200..<300).contains(status),
            let (taken, original) = state.withLock({ $0.download.userFileToRestore }),
            !FileManager.default.fileExists(atPath: original.path), (try? FileManager.default.moveItem(at: taken, to: original)) != nil
        else { return false }
        return true
    }

    /// The task was made but is dropped unstarted (its request was cancelled meanwhile): a partial
    /// file it was to continue goes, unless the user's resume data names it.
    package func discardUnstarted() {
        let file = state.withLock { $0.download.release().file }
        if let file { try? FileManager.default.removeItem(at: file) }
    }

    /// The download's file is the delegate's now: nothing removes it.
    func handOverDownloadFile() {
        state.withLock { $0.download.handOver() }
    }

    /// The task is completing with `failure`: a partial file is kept when resume data can describe
    /// it (a cancel that asked for resume data, or a failed exchange) and removed otherwise. Returns
    /// the resumption, and the handler of a cancel that asked for it.
    func settleDownloadFile(
        _ failure: LoadingTaskStateMachine.Failure?
    ) -> (DownloadResumption?, (@Sendable (DownloadResumption?) -> Void)?) {
        let (owned, handler) = state.withLock { state in (state.download.release(), state.machine.takeResumeDataHandler()) }
        guard let file = owned.file else { return (nil, handler) }
        if DownloadFileState.keepsPartialFile(after: failure, resumeDataRequested: handler != nil), var resumable = owned.resumable,
            let size = DownloadFile.size(of: file)
        {
            resumable.file = file
            resumable.offset = size
            return (resumable, handler)
        }
        try? FileManager.default.removeItem(at: file)
        return (nil, handler)
    }
}
