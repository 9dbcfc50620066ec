import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Resumable downloads. A download cancelled with `cancel(producingResumeData: true)` (or
// `cancel(byProducingResumeData:)`), or one whose transfer failed, keeps its partial file in the
// session's temporary directory and describes it in resume data; `Session.download(resumingWith:)`
// continues it with `Range` and `If-Range`. The resume data is AlamofireNIO's own (Apple's archived
// `NSURLSessionResumeInfo` cannot be read or made on Linux): versioned JSON, described on
// `DownloadResumption` and in the README. A download can be continued only when it was a GET and its
// response had a strong `ETag` or a `Last-Modified`, as with URLSession.

extension DownloadRequest {
    /// Why `Session.download(resumingWith:)` cannot use the resume data it was given; it fails the request as
    /// `AFError.createURLRequestFailed(error:)`.
    public enum ResumeDataError: Error, Equatable, Sendable, LocalizedError {
        /// The data is not AlamofireNIO resume data: corrupt, or from elsewhere (such as Apple's URLSession).
        case unreadable
        /// The data was written by a newer format version than this library reads.
        case unsupportedVersion(Int)
        /// The data's URL is not an absolute `http` or `https` URL.
        case invalidURL(String)
        /// The data's partial file name is not a plain file name.
        case invalidTemporaryFileName(String)
        /// The data names no validator (`ETag` or `Last-Modified`), a negative length, or a method other than GET.
        case notResumable

        /// A description of why the resume data cannot be used.
        public var errorDescription: String? {
            switch self {
            case .unreadable: "The resume data is not AlamofireNIO resume data; it is corrupt or comes from another library."
            case .unsupportedVersion(let version): "The resume data has format version \(version), which this version cannot read."
            case .invalidURL(let url): "The resume data's URL \"\(url)\" is not an absolute http or https URL."
            case .invalidTemporaryFileName(let name): "The resume data's file name \"\(name)\" is not a plain file name."
            case .notResumable: "The resume data does not describe a download that can be continued."
            }
        }

        init(_ error: DownloadResumption.DecodingError) {
            switch error {
            case .unreadable: self = .unreadable
            case .unsupportedVersion(let version): self = .unsupportedVersion(version)
            case .invalidURL(let url): self = .invalidURL(url)
            case .invalidTemporaryFileName(let name): self = .invalidTemporaryFileName(name)
            case .notResumable: self = .notResumable
            }
        }
    }

    /// What a download keeps between its cancel or failed attempt and the task that continues it.
    struct ResumeState {
        /// The handler of a cancel that asked for resume data, until the task is cancelled.
        var resumeDataHandler: (@Sendable (Data?) -> Void)?
        /// The partial file the next attempt continues.
        var nextResumption: DownloadResumption?
        /// The URL the failed attempt that left ``nextResumption`` was sent to before any redirect: a retry sent there
        /// follows the redirects again and continues the file.
        var nextResumptionOrigin: URL?

        mutating func takeResumeDataHandler() -> (@Sendable (Data?) -> Void)? {
            defer { resumeDataHandler = nil }
            return resumeDataHandler
        }

        /// The partial file the next attempt continues, with its origin; it is no longer kept here.
        mutating func takeNextResumption() -> (resumption: DownloadResumption, origin: URL?)? {
            defer {
                nextResumption = nil
                nextResumptionOrigin = nil
            }
            return nextResumption.map { ($0, nextResumptionOrigin) }
        }
    }

    /// Cancels the instance, optionally producing resume data. Once cancelled, a `DownloadRequest` can no longer be
    /// resumed or suspended.
    ///
    /// - Note: If `producingResumeData` is `true`, the `resumeData` property will be populated with any resume data, if
    ///         available.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func cancel(producingResumeData shouldProduceResumeData: Bool) -> Self {
        cancel(optionallyProducingResumeData: shouldProduceResumeData ? { @Sendable _ in } : nil)
    }

    /// Cancels the instance while producing resume data. Once cancelled, a `DownloadRequest` can no longer be resumed
    /// or suspended.
    ///
    /// - Note: The resume data passed to the completion handler will also be available on the instance's `resumeData`
    ///         property.
    ///
    /// - Parameter completionHandler: The completion handler that is called when the download has been successfully
    ///                                cancelled. It is not guaranteed to be called on a particular queue, so you may
    ///                                want use an appropriate queue to perform your work.
    ///
    /// - Returns:                     The instance.
    @preconcurrency
    @discardableResult
    public func cancel(byProducingResumeData completionHandler: @Sendable @escaping (_ data: Data?) -> Void) -> Self {
        cancel(optionallyProducingResumeData: completionHandler)
    }

    /// As Alamofire: the handler is called only when a task under way was cancelled (not when the request had no task
    /// or had already finished).
    private func cancel(optionallyProducingResumeData handler: (@Sendable (Data?) -> Void)?) -> Self {
        guard let handler else { return cancel() }
        // Taken by `cancelLoadingTask`, which may run after `cancel()` returns; a cancel that finds no task to stop
        // leaves it uncalled.
        resumeState.withLock { $0.resumeDataHandler = handler }
        return cancel()
    }

    /// The resumption the `.resumeData` this request was made from describes.
    func resumption() throws(AFError) -> DownloadResumption {
        guard case .resumeData(let data) = downloadable else {
            throw AFError.createURLRequestFailed(error: ResumeDataError.unreadable)
        }
        do {
            return try DownloadResumption(decoding: data, temporaryDirectory: fileManager.temporaryDirectory)
        } catch {
            throw AFError.createURLRequestFailed(error: ResumeDataError(error))
        }
    }

    /// Set-up of a request made from resume data (on the root queue): as with Alamofire, no `URLRequest` is built or
    /// adapted; the task is made from the data at once. Data that cannot be read fails the request.
    func performResumingSetup() {
        let resumption: DownloadResumption
        if let kept = resumeState.withLock({ $0.nextResumption }) {
            resumption = kept
        } else {
            do throws(AFError) {
                resumption = try self.resumption()
            } catch {
                return didFailToCreateURLRequest(with: error)
            }
        }
        guard !isCancelled else { return }
        resumeState.withLock { $0.nextResumption = resumption }
        createTask(for: resumption.request)
    }

    /// The partial file the task for `urlRequest` continues: the last failed attempt's (when it was for the same URL,
    /// before or after its redirects) or the resume data's. One that does not apply is removed.
    func takeResumption(for urlRequest: URLRequest) -> DownloadResumption? {
        guard let (taken, origin) = resumeState.withLock({ $0.takeNextResumption() }) else { return nil }
        var resumption = taken
        let sameURL = resumption.request.url == urlRequest.url || (origin != nil && origin == urlRequest.url)
        guard sameURL, (urlRequest.httpMethod ?? "GET") == "GET", urlRequest.httpBody == nil else {
            if !isUsersResumeDataFile(resumption.file) { try? fileManager.removeItem(at: resumption.file) }
            return nil
        }
        resumption.request = urlRequest
        resumption.isHeldByUser = isUsersResumeDataFile(resumption.file)
        return resumption
    }

    /// Whether `file` is the partial file the resume data this request was made from names.
    func isUsersResumeDataFile(_ file: URL) -> Bool {
        guard case .resumeData = downloadable, let own = try? resumption() else { return false }
        return own.file == file
    }

    /// Removes the partial file a failed attempt left for a task that never took it. The file the user's resume data
    /// names stays: that data still continues it.
    func discardUnusedResumption() {
        guard let pending = resumeState.withLock({ $0.takeNextResumption() })?.resumption, !isUsersResumeDataFile(pending.file)
        else { return }
        try? fileManager.removeItem(at: pending.file)
    }

    /// Before a retry: the last attempt's error may carry resume data, which the next attempt continues.
    func keepResumptionForRetry() {
        let lastTask = mutableState.withLock { $0.tasks.last }
        let data = lastTask?.snapshot.error?.userInfo[LoadingTask.resumeDataKey] as? Data
        let resumption = data.flatMap { try? DownloadResumption(decoding: $0, temporaryDirectory: fileManager.temporaryDirectory) }
        let replaced = resumeState.withLock { state in
            defer {
                state.nextResumption = resumption
                state.nextResumptionOrigin = resumption == nil ? nil : lastTask?.originalRequest.url
            }
            return state.nextResumption
        }
        if let replaced, replaced.file != resumption?.file { try? fileManager.removeItem(at: replaced.file) }
    }
}

extension DownloadRequest {
    /// Creates a `URLSessionTask` from the provided resume data.
    ///
    /// Alamofire asks `session` for a download task. Here the task stands for a loading task of this request's
    /// ``Session`` that continues the partial file the resume data describes (`session`, which loads nothing, is not
    /// used). As with Alamofire's, the task is not started and no request hears of it: resume downloads with
    /// `Session.download(resumingWith:)`. Resume data that cannot be read gives a task that fails
    /// with `URLError(.unsupportedURL)` when resumed; once the `Session` is gone, a task that does nothing.
    ///
    /// - Parameters:
    ///   - data:    `Data` used to resume the download.
    ///   - session: `URLSession` used to create the `URLSessionTask` in Alamofire; not used here.
    ///
    /// - Returns:   The `URLSessionTask` created.
    public func task(forResumeData data: Data, using session: URLSession) -> URLSessionTask {
        guard let owner = self.session else { return URLSessionDownloadTask() }
        let resumption = try? DownloadResumption(decoding: data, temporaryDirectory: fileManager.temporaryDirectory)
        let request = resumption?.request ?? URLRequest(url: URL(string: "about:blank")!)
        let task = owner.loading.makeTask(
            with: request, destination: loadingDestination(), resuming: resumption, delegate: owner.delegate, owner: nil)
        return LoadingDownloadTask(task)
    }
}
