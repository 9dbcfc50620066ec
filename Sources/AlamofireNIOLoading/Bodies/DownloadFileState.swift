import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which file a download task writes and owns, and what resume data for it would say.
///
/// The rules: the partial file of resume data the user holds stays the user's until the task takes
/// it (under a new name, as it sends the range), and goes back under its first name when the answer
/// to the range is an error; any other file is the task's, removed when the task ends without handing
/// it over unless resume data can describe it. A value, tested as one: the task keeps it under its
/// lock and performs the file operations its methods return once the lock is released.
struct DownloadFileState: Sendable {
    /// Where the body goes and from which offset, once the final response's head is known.
    struct Plan: Equatable {
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

    /// The part of a download the next exchange asks for (nil once answered).
    private(set) var resumption: DownloadResumption?
    /// What resume data for ``file`` would say (its offset is the file's size when it is made).
    private(set) var resumable: DownloadResumption?
    /// The file the task writes and owns, until it hands it to the delegate; nil while the user's
    /// resume data still names it.
    private(set) var file: URL?
    /// The name the partial file had in the resume data the user holds, before the task took it.
    private var userFileName: URL?
    /// Whether the delegate still has to hear where the download continues.
    private var reportsResumeOffset = false

    /// A task writing a new file, or continuing `resumption`'s.
    init(continuing resumption: DownloadResumption? = nil) {
        guard let resumption else { return }
        self.resumption = resumption
        resumable = resumption
        // The user's file becomes the task's once it takes it; another (a retry's) is the task's already.
        file = resumption.isHeldByUser ? nil : resumption.file
        reportsResumeOffset = true
    }

    /// `resumption` cannot be continued (its file is gone or short, or it has no validator): the
    /// body starts over in a new file.
    mutating func forget(_ resumption: DownloadResumption) {
        self.resumption = nil
        resumable = nil
        if file == resumption.file { file = nil }
    }

    /// The task moved the partial file from `original` to `resumption.file`, and asks for the rest.
    mutating func took(_ resumption: DownloadResumption, from original: URL) {
        // The first name is what the user's resume data says; later hops take the file again.
        if resumption.isHeldByUser, userFileName == nil { userFileName = original }
        self.resumption = resumption
        resumable = resumption
        file = resumption.file
    }

    /// The range was refused (a `416`, or another range): returns the partial file, to remove; the
    /// request goes again without a range.
    mutating func rangeRefused() -> URL? {
        defer { file = nil }
        resumption = nil
        resumable = nil
        return file
    }

    /// The user's partial file, as the task took it and as first named: what an error answer to the
    /// range gives back.
    var userFileToRestore: (taken: URL, original: URL)? {
        guard let resumption, let userFileName else { return nil }
        return (resumption.file, userFileName)
    }

    /// Decides where the final response's body goes: the partial file continued from its offset
    /// for a `206` matching the range, the partial file rewritten for any other answer to a
    /// continued request, or `newFile`. `restoredUserFile` says the user's partial file was given
    /// back (``userFileToRestore``), so the body goes to a new file.
    mutating func plan(
        for response: HTTPURLResponse?, streamed: Bool, restoredUserFile: Bool, request: URLRequest, newFile: () -> URL
    ) -> Plan {
        var continued = resumption
        resumption = nil
        if restoredUserFile {
            continued = nil
            file = nil
        }
        // The decoded length of a compressed body is unknown.
        let isEncoded =
            response?.value(forHTTPHeaderField: "Content-Encoding").map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
        let length = isEncoded ? nil : response.flatMap { $0.expectedContentLength >= 0 ? $0.expectedContentLength : nil }
        var plan = Plan(
            file: continued?.file ?? file ?? newFile(), offset: nil, expectedTotalBytes: length, countsWrittenBytes: streamed,
            reportedOffset: nil, resumable: nil)
        if let continued, streamed, let response, case .append(let total) = continued.continuation(after: response) {
            plan.offset = continued.offset
            plan.expectedTotalBytes = total ?? length.map { $0 + continued.offset }
        }
        if reportsResumeOffset {
            reportsResumeOffset = false
            plan.reportedOffset = plan.offset ?? 0
        }
        plan.resumable = DownloadResumption.possible(
            request: request, response: response, file: plan.file, offset: plan.offset ?? 0,
            expectedTotalBytes: plan.expectedTotalBytes, previous: plan.offset == nil ? nil : continued)
        file = plan.file
        resumable = plan.resumable
        return plan
    }

    /// The file is the delegate's now: nothing removes it.
    mutating func handOver() {
        file = nil
        resumable = nil
    }

    /// The task is dropped unstarted, or completes: returns its file (never the user's untaken one)
    /// and what resume data for it would say, and owns nothing after.
    mutating func release() -> (file: URL?, resumable: DownloadResumption?) {
        defer { self = DownloadFileState() }
        return (file, resumable)
    }

    /// Whether a task ending with `failure` keeps its partial file for resume data: after a failed
    /// exchange (URLSession puts resume data in the error), or a cancel that asked for it.
    static func keepsPartialFile(after failure: LoadingTaskStateMachine.Failure?, resumeDataRequested: Bool) -> Bool {
        failure == .exchangeFailed || (failure == .cancelled && resumeDataRequested)
    }
}
