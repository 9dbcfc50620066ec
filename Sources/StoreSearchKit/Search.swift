import AFSynchronization
public import AlamofireNIO
import Foundation
import Synchronization

/// A search of the iTunes Store, as the StoreSearch chapter's `Search` class: the categories, the
/// states a search goes through, and one search at a time (a new one cancels the one in flight).
///
/// The request goes through Alamofire's API: the query is encoded by a
/// `URLEncodedFormParameterEncoder`, the answer decoded by `responseDecodable`, and a superseded
/// search ends with `request.cancel()` where the chapter called `dataTask?.cancel()`.
public final class Search: Sendable {
    /// What to search for: the chapter's segmented control.
    public enum Category: Int, CaseIterable, Sendable {
        case all = 0
        case music
        case software
        case ebooks

        /// The API's `entity` for the category.
        public var type: String {
            switch self {
            case .all: ""
            case .music: "musicTrack"
            case .software: "software"
            case .ebooks: "ebook"
            }
        }
    }

    /// Where a search is.
    public enum State: Sendable, Equatable {
        /// No search has finished yet (or the last one failed).
        case notSearchedYet
        /// A search is in flight.
        case loading
        /// The last search found nothing.
        case noResults
        /// The last search's results, sorted by name.
        case results([SearchResult])
    }

    /// The chapter's completion: whether the search succeeded.
    public typealias SearchComplete = @Sendable (Bool) -> Void

    /// The iTunes Search API.
    public static let iTunesEndpoint = URL(string: "https://itunes.apple.com/search")!

    /// The session searches go through.
    public let session: Session
    /// The search URL, without a query.
    public let endpoint: URL
    /// Where `lang` and `country` come from.
    public let locale: Locale
    /// The most results to ask for (the chapter's 200).
    public let limit: Int

    private struct Progress {
        var state = State.notSearchedYet
        var lastError: AFError?
        var request: DataRequest?
    }

    private let progress = Mutex(Progress())

    /// Creates a search.
    /// - Parameters:
    ///   - session:  The session to search through. `.default` by default.
    ///   - endpoint: The search URL. iTunes' by default.
    ///   - locale:   Where `lang` and `country` come from. The user's locale by default.
    ///   - limit:    The most results to ask for. 200 by default.
    public init(session: Session = .default, endpoint: URL = Search.iTunesEndpoint, locale: Locale = .autoupdatingCurrent, limit: Int = 200)
    {
        self.session = session
        self.endpoint = endpoint
        self.locale = locale
        self.limit = limit
    }

    /// Where the search is now.
    public var state: State { progress.withLock { $0.state } }

    /// Why the last search failed, if it did.
    public var lastError: AFError? { progress.withLock { $0.lastError } }

    /// The query of a search for `text` in `category`: `term`, `limit`, `entity`, and `lang` and
    /// `country` from the locale, as the chapter builds them.
    public func parameters(for text: String, category: Category) -> [String: String] {
        var parameters = ["term": text, "limit": "\(limit)", "entity": category.type]
        let language = locale.identifier
        if !language.isEmpty { parameters["lang"] = language }
        parameters["country"] = locale.region?.identifier ?? "en_US"
        return parameters
    }

    /// Searches for `text` in `category`, cancelling the search in flight, as the chapter's
    /// `performSearch(for:category:completion:)`. Does nothing for empty text. `completion` runs on
    /// `queue` with whether the search succeeded, after ``state`` has its outcome; a search that a
    /// newer one cancelled never calls it.
    public func performSearch(for text: String, category: Category, queue: DispatchQueue = .main, completion: @escaping SearchComplete) {
        guard !text.isEmpty else { return }
        start(text: text, category: category, queue: queue) { outcome in
            switch outcome {
            case .success: completion(true)
            case .failure(let error) where error.isExplicitlyCancelledError: break
            case .failure: completion(false)
            }
        }
    }

    /// Searches for `text` in `category`, cancelling the search in flight, and returns the outcome
    /// (``State/noResults`` or ``State/results(_:)``).
    /// - Throws: the search's `AFError`; `AFError.explicitlyCancelled` when a newer search or the
    ///   task's cancellation cancelled it.
    public func search(for text: String, category: Category) async throws(AFError) -> State {
        let request = Mutex<DataRequest?>(nil)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<State, AFError>, Never>) in
                let started = start(text: text, category: category, queue: .global()) { continuation.resume(returning: $0) }
                request.withLock { $0 = started }
                if Task.isCancelled { started.cancel() }
            }
        } onCancel: {
            request.withLock { $0 }?.cancel()
        }
        return try outcome.get()
    }

    /// Cancels the search in flight, if any.
    public func cancel() {
        progress.withLock { $0.request }?.cancel()
    }

    @discardableResult
    private func start(
        text: String, category: Category, queue: DispatchQueue, completion: @escaping @Sendable (Result<State, AFError>) -> Void
    ) -> DataRequest {
        let request = session.request(
            endpoint, parameters: parameters(for: text, category: category), encoder: URLEncodedFormParameterEncoder.default
        )
        .validate()
        let previous = progress.withLock { progress in
            defer {
                progress.request = request
                progress.state = .loading
                progress.lastError = nil
            }
            return progress.request
        }
        previous?.cancel()
        request.responseDecodable(of: ResultArray.self, queue: queue) { [weak self] response in
            let outcome = response.result.map { answer in
                answer.results.isEmpty ? State.noResults : .results(answer.results.sorted(by: <))
            }
            self?.progress.withLock { progress in
                // A superseded search leaves the state to the newer one.
                guard progress.request === request else { return }
                progress.request = nil
                switch outcome {
                case .success(let state): progress.state = state
                case .failure(let error):
                    progress.state = .notSearchedYet
                    progress.lastError = error
                }
            }
            completion(outcome)
        }
        return request
    }
}
