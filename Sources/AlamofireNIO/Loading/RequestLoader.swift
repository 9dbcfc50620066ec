import AlamofireNIOTransport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one attempt of a request produced: URLSession's view of a finished task.
struct LoadResult: Sendable {
    var response: HTTPURLResponse?
    var data: Data?
    /// Where the body was written, when the load was asked to write it to a file.
    var fileURL: URL?
    var metrics: TaskMetrics?
    /// A `URLError` with the code URLSession would give, when the attempt failed.
    var error: URLError?
}

/// How one load differs from a plain data task.
struct LoadOptions: Sendable {
    /// Where the body comes from instead of `httpBody` (uploads).
    var body: TransportRequest.Body?
    /// Set to stream the response body into a new file in this directory instead of memory.
    var downloadDirectory: URL?
    /// Bytes sent so far and the total, if known; called on an event loop.
    var onUploadProgress: (@Sendable (Int64, Int64?) -> Void)?
    /// Bytes received so far and the total, if known; called on an event loop.
    var onDownloadProgress: (@Sendable (Int64, Int64?) -> Void)?
}

/// Performs one attempt of a `URLRequest` on the transport, applying the session configuration the
/// way URLSession does: its headers under the request's own, its timeouts unless the request sets
/// one, and redirects followed by URLSession's rules (see ``RedirectRule``).
struct RequestLoader: Sendable {
    let transport: HTTPTransport
    /// The session's headers, already in the transport's form; each request's own replace them.
    let baseHeaders: NIOHTTP1.HTTPHeaders
    let requestTimeout: TimeInterval
    let resourceTimeout: TimeInterval

    init(transport: HTTPTransport, additionalHeaders: HTTPHeaders, requestTimeout: TimeInterval, resourceTimeout: TimeInterval) {
        self.transport = transport
        self.baseHeaders = NIOHTTP1.HTTPHeaders(additionalHeaders.map { ($0.name, $0.value) })
        self.requestTimeout = requestTimeout
        self.resourceTimeout = resourceTimeout
    }

    /// The largest body a data request keeps in memory (4 GiB); downloads stream to disk instead.
    static let maximumBodySize = 1 << 32

    /// URLRequest's default `timeoutInterval`: a request with another value chose its own.
    static let defaultRequestTimeout: TimeInterval = 60

    /// URLSession's limit; one more fails with `.httpTooManyRedirects`.
    static let maximumRedirects = 16

    /// Loads `urlRequest`, following redirects, and calls `completion` once with the outcome, on an
    /// event loop (or the calling thread when nothing could be sent). No Swift task is involved.
    /// - Returns: the operation, to cancel it.
    @discardableResult
    func load(
        _ urlRequest: URLRequest, options: LoadOptions = LoadOptions(), completion: @escaping @Sendable (LoadResult) -> Void
    ) -> LoadOperation {
        let operation = LoadOperation()
        let task = LoadTask(
            loader: self, operation: operation, started: Date(), anchor: WallClockAnchor(), completion: completion)
        task.load(urlRequest, options: options, transactions: [])
        return operation
    }

    /// One task's chain of exchanges, one per redirect.
    private struct LoadTask: Sendable {
        let loader: RequestLoader
        let operation: LoadOperation
        let started: Date
        let anchor: WallClockAnchor
        let completion: @Sendable (LoadResult) -> Void

        func load(_ current: URLRequest, options: LoadOptions, transactions: [TransactionMetrics]) {
            loader.loadOnce(current, options: options, anchor: anchor, operation: operation) { result, transaction in
                var result = result
                var transactions = transactions
                if let transaction { transactions.append(transaction) }
                result.metrics =
                    transactions.isEmpty
                    ? nil
                    : TaskMetrics(
                        transactionMetrics: transactions, taskInterval: DateInterval(start: started, end: Date()),
                        redirectCount: transactions.count - 1)
                guard let response = result.response, let next = RedirectRule.nextRequest(after: current, response: response) else {
                    return completion(result)
                }
                guard transactions.count <= RequestLoader.maximumRedirects else {
                    result.error = URLError(.httpTooManyRedirects, userInfo: [NSURLErrorFailingURLErrorKey: response.url as Any])
                    return completion(result)
                }
                // A redirect that turned the request into a GET drops an upload's body with `httpBody`.
                var nextOptions = options
                if next.httpMethod != current.httpMethod { nextOptions.body = nil }
                load(next, options: nextOptions, transactions: transactions)
            }
        }
    }

    /// One exchange, without following redirects; the metrics are the exchange's own.
    private func loadOnce(
        _ urlRequest: URLRequest, options: LoadOptions, anchor: WallClockAnchor, operation: LoadOperation,
        completion: @escaping @Sendable (LoadResult, TransactionMetrics?) -> Void
    ) {
        guard let url = urlRequest.url else {
            return completion(LoadResult(error: URLError(.badURL)), nil)
        }
        var headers = baseHeaders
        for (name, value) in urlRequest.allHTTPHeaderFields ?? [:] { headers.replaceOrAdd(name: name, value: value) }

        let idle = urlRequest.timeoutInterval != Self.defaultRequestTimeout ? urlRequest.timeoutInterval : requestTimeout
        var transportRequest = TransportRequest(
            method: NIOHTTP1.HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"), url: url, headers: headers,
            body: options.body ?? urlRequest.httpBody.map { .bytes(ByteBuffer(bytes: $0)) } ?? .none,
            timeouts: TransportTimeouts(
                connect: Self.timeAmount(idle), idle: Self.timeAmount(idle), total: Self.timeAmount(resourceTimeout)))
        transportRequest.onUploadProgress = options.onUploadProgress
        transportRequest.onDownloadProgress = options.onDownloadProgress

        if let directory = options.downloadDirectory {
            return operation.start {
                download(transportRequest, urlRequest: urlRequest, into: directory, anchor: anchor, completion: completion)
            } ifCancelled: {
                completion(Self.cancelledResult(url), nil)
            }
        }
        operation.start {
            // A DataRequest keeps the whole body, so the transport collects it on the event loop.
            let handle = transport.execute(transportRequest, collectingUpTo: Self.maximumBodySize) { outcome in
                switch outcome {
                case .success(let response):
                    let httpResponse = Self.httpURLResponse(response.head, url: url)
                    let data = response.body.readableBytes > 0 ? Data(response.body.readableBytesView) : nil
                    let transaction = TransactionMetrics(
                        response.completion.metrics, request: urlRequest, response: httpResponse, clock: anchor)
                    completion(LoadResult(response: httpResponse, data: data), transaction)
                case .failure(let error):
                    completion(LoadResult(error: error.urlError(for: url)), nil)
                }
            }
            return handle.cancel
        } ifCancelled: {
            completion(Self.cancelledResult(url), nil)
        }
    }

    /// Streams the response body into a new file in `directory`, unless the response is a redirect
    /// to follow (its body is read and dropped, keeping the connection). Returns the cancel action.
    private func download(
        _ transportRequest: TransportRequest, urlRequest: URLRequest, into directory: URL, anchor: WallClockAnchor,
        completion: @escaping @Sendable (LoadResult, TransactionMetrics?) -> Void
    ) -> @Sendable () -> Void {
        let url = transportRequest.url
        let task = Task {
            var fileURL: URL?
            do {
                let response = try await transport.execute(transportRequest)
                let httpResponse = Self.httpURLResponse(response.head, url: url)
                if let httpResponse, RedirectRule.nextRequest(after: urlRequest, response: httpResponse) != nil {
                    for try await _ in response.body {}
                } else {
                    let file = DownloadFile.temporaryURL(in: directory)
                    fileURL = file
                    try await DownloadFile.write(response.body, to: file)
                }
                let metrics = try await response.finished().metrics
                let transaction = TransactionMetrics(metrics, request: urlRequest, response: httpResponse, clock: anchor)
                completion(LoadResult(response: httpResponse, fileURL: fileURL), transaction)
            } catch {
                if let fileURL { try? FileManager.default.removeItem(at: fileURL) }
                completion(LoadResult(error: Self.urlError(error, url: url)), nil)
            }
        }
        return { task.cancel() }
    }

    private static func cancelledResult(_ url: URL) -> LoadResult {
        LoadResult(error: TransportError(.cancelled, "the request was cancelled").urlError(for: url))
    }

    private static func urlError(_ error: any Error, url: URL) -> URLError {
        switch error {
        case let error as TransportError: error.urlError(for: url)
        case let error as URLError: error
        case is CancellationError: TransportError(.cancelled, "the request was cancelled").urlError(for: url)
        default: URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error, NSURLErrorFailingURLErrorKey: url])
        }
    }

    private static func timeAmount(_ interval: TimeInterval) -> TimeAmount? {
        guard interval > 0, interval.isFinite else { return nil }
        return .nanoseconds(Int64(min(interval, 1e9) * 1e9))
    }

    /// The response as Foundation's type; repeated fields are joined with commas, as URLSession does.
    static func httpURLResponse(_ head: HTTPResponseHead, url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        for (name, value) in head.headers {
            if let existing = fields[name] {
                fields[name] = existing + ", " + value
            } else {
                fields[name] = value
            }
        }
        return HTTPURLResponse(
            url: url, statusCode: Int(head.status.code), httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
            headerFields: fields)
    }
}

/// A running load, so that it can be cancelled whichever of its exchanges is under way.
final class LoadOperation: Sendable {
    private struct State {
        var cancelAction: (@Sendable () -> Void)?
        var isCancelled = false
    }

    private let state = Mutex(State())

    /// Starts the next exchange unless the operation was cancelled; `body` returns how to cancel it.
    fileprivate func start(_ body: () -> @Sendable () -> Void, ifCancelled: () -> Void) {
        guard !state.withLock({ $0.isCancelled }) else { return ifCancelled() }
        let cancelAction = body()
        // A cancel that came while the exchange was starting did not see it: apply it now.
        let cancelledMeanwhile = state.withLock { state -> Bool in
            state.cancelAction = cancelAction
            return state.isCancelled
        }
        if cancelledMeanwhile { cancelAction() }
    }

    /// Cancels the exchange under way; the load then completes with `.cancelled`.
    func cancel() {
        let cancelAction = state.withLock { state -> (@Sendable () -> Void)? in
            state.isCancelled = true
            return state.cancelAction
        }
        cancelAction?()
    }
}

/// URLSession's redirect rules: 301, 302 and 303 turn a request into a GET without a body (303
/// keeps HEAD); 307 and 308 repeat the method and body. `Authorization` is not carried to another
/// origin.
enum RedirectRule {
    static func nextRequest(after request: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"),
            let base = request.url, let target = URL(string: location, relativeTo: base)?.absoluteURL,
            ["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return nil }
        var next = request
        next.url = target
        let method = request.httpMethod ?? "GET"
        let keepsMethod = response.statusCode == 307 || response.statusCode == 308
        if !keepsMethod && !(response.statusCode == 303 && method == "HEAD") && method != "GET" && method != "HEAD" {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        if base.host?.lowercased() != target.host?.lowercased() || base.port != target.port || base.scheme != target.scheme {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
        }
        return next
    }
}
