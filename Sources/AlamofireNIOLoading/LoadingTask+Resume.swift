import AFSynchronization
import AlamofireNIOTransport
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a download continues from a ``DownloadResumption`` and leaves one behind: the range it asks
/// for, what it makes of the answer, and what becomes of its partial file when it ends without
/// success (kept for resume data, or removed). The file of resume data the user holds is the task's
/// only once it takes it (under a new name, as it sends the range); until then, and after an error
/// answer to the range, it stays the user's.
extension LoadingTask {
    /// The `URLError` user-info key under which URLSession puts a failed download's resume data.
    package static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"

    /// Where the body goes and from which offset, once the final response's head is known.
    struct DownloadPlan {
        var file: URL
        /// Nil writes a new file; otherwise the body continues the file from here.
        var offset: Int64?
        /// The whole body's length, if known.
        var expectedTotalBytes: Int64?
        /// Whether progress is counted from the bytes written (a streamed body's; a local one reports its own).
        var countsWrittenBytes: Bool
        /// The offset the delegate hears the download resumed at, once.
        var reportedOffset: Int64?
        /// What resume data for the file would say.
        var resumable: DownloadResumption?
    }

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
            state.withLock { state in
                state.resumption = nil
                state.resumable = nil
                if state.downloadFile == resumption.file { state.downloadFile = nil }
            }
            return nil
        }
        let original = resumption.file
        resumption.file = taken
        state.withLock { state in
            // The first name, which the resume data the user holds says (later hops take the file again).
            if resumption.isHeldByUser, state.resumedFileName == nil { state.resumedFileName = original }
            state.resumption = resumption
            state.resumable = resumption
            state.downloadFile = taken
        }
        request.setValue("bytes=\(resumption.offset)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        return resumption
    }

    /// A continued request got a `416` or another range: its partial file goes and the request is
    /// sent again without a range.
    func askAgainWithoutRange(recording transaction: TransactionMetrics) {
        let (action, file) = state.withLock { state in
            state.transactions.append(transaction)
            state.resumption = nil
            state.resumable = nil
            defer { state.downloadFile = nil }
            return (state.machine.restartRequested(), state.downloadFile)
        }
        if let file { try? FileManager.default.removeItem(at: file) }
        perform(action)
    }

    /// Decides where the final response's body goes (called once, as it starts): the partial file
    /// continued from its offset for a matching `206`, the partial file rewritten for any other
    /// response to a continued request, or a new file in `directory`. An error answer (a `404`, a
    /// `503`) to a request continuing the user's resume data leaves its partial file alone, under the
    /// name that data gives it, so the data can continue it later.
    func downloadPlan(for response: URLResponse?, streamed: Bool, directory: URL) -> DownloadPlan {
        let restored = restorePartialFile(ifRefusedBy: response, streamed: streamed)
        return state.withLock { state in
            var resumption = state.resumption
            state.resumption = nil
            if restored {
                resumption = nil
                state.downloadFile = nil
            }
            let http = response as? HTTPURLResponse
            // The decoded length of a compressed body is unknown.
            let isEncoded =
                http?.value(forHTTPHeaderField: "Content-Encoding").map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
            let length = isEncoded ? nil : http.flatMap { $0.expectedContentLength >= 0 ? $0.expectedContentLength : nil }
            var plan = DownloadPlan(
                file: resumption?.file ?? state.downloadFile ?? DownloadFile.temporaryURL(in: directory), offset: nil,
                expectedTotalBytes: length, countsWrittenBytes: streamed, reportedOffset: nil, resumable: nil)
            if let resumption, streamed, let http, case .append(let total) = resumption.continuation(after: http) {
                plan.offset = resumption.offset
                plan.expectedTotalBytes = total ?? length.map { $0 + resumption.offset }
            }
            if state.reportsResumeOffset {
                state.reportsResumeOffset = false
                plan.reportedOffset = plan.offset ?? 0
            }
            plan.resumable = DownloadResumption.possible(
                request: state.currentRequest, response: http, file: plan.file, offset: plan.offset ?? 0,
                expectedTotalBytes: plan.expectedTotalBytes, previous: plan.offset == nil ? nil : resumption)
            state.downloadFile = plan.file
            state.resumable = plan.resumable
            state.bytesReceived = plan.offset ?? 0
            return plan
        }
    }

    /// Gives the partial file of the user's resume data its name back when the final response is an
    /// error (not 2xx), so the body goes to a new file; returns whether it did.
    private func restorePartialFile(ifRefusedBy response: URLResponse?, streamed: Bool) -> Bool {
        guard streamed, let status = (response as? HTTPURLResponse)?.statusCode, !(200..<300).contains(status) else { return false }
        guard
            let (taken, original) = state.withLock({ state in state.resumption.flatMap { r in state.resumedFileName.map { (r.file, $0) } } }
            ),
            !FileManager.default.fileExists(atPath: original.path), (try? FileManager.default.moveItem(at: taken, to: original)) != nil
        else { return false }
        return true
    }

    /// The task was made but is dropped unstarted (its request was cancelled meanwhile): a partial
    /// file it was to continue goes, unless the user's resume data names it.
    package func discardUnstarted() {
        let file = state.withLock { state in
            defer {
                state.downloadFile = nil
                state.resumable = nil
                state.resumption = nil
            }
            return state.downloadFile
        }
        if let file { try? FileManager.default.removeItem(at: file) }
    }

    /// The download's file is the delegate's now: nothing removes it.
    func handOverDownloadFile() {
        state.withLock { state in
            state.downloadFile = nil
            state.resumable = nil
        }
    }

    /// The task is completing with `failure`: a partial file is kept when resume data can describe
    /// it (a cancel that asked for resume data, or a failed exchange) and removed otherwise. Returns
    /// the resumption, and the handler of a cancel that asked for it.
    func settleDownloadFile(
        _ failure: LoadingTaskStateMachine.Failure?
    ) -> (DownloadResumption?, (@Sendable (DownloadResumption?) -> Void)?) {
        let (file, resumable, handler) = state.withLock { state in
            defer {
                state.downloadFile = nil
                state.resumable = nil
                state.resumeDataHandler = nil
            }
            return (state.downloadFile, state.resumable, state.resumeDataHandler)
        }
        guard let file else { return (nil, handler) }
        let keeps = failure == .exchangeFailed || (failure == .cancelled && handler != nil)
        if keeps, var resumable, let size = DownloadFile.size(of: file) {
            resumable.file = file
            resumable.offset = size
            return (resumable, handler)
        }
        try? FileManager.default.removeItem(at: file)
        return (nil, handler)
    }
}
