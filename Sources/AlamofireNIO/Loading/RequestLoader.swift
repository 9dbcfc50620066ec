import AlamofireNIOTransport
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one attempt of a request produced: URLSession's view of a finished task.
struct LoadResult: Sendable {
    var response: HTTPURLResponse?
    var data: Data?
    var metrics: TaskMetrics?
    /// A `URLError` with the code URLSession would give, when the attempt failed.
    var error: URLError?
}

/// Performs one attempt of a `URLRequest` on the transport, applying the session configuration the
/// way URLSession does: its headers under the request's own, its timeouts unless the request sets one.
struct RequestLoader: Sendable {
    let transport: HTTPTransport
    let additionalHeaders: HTTPHeaders
    let requestTimeout: TimeInterval
    let resourceTimeout: TimeInterval

    /// The largest body a data request keeps in memory (4 GiB); downloads stream to disk instead.
    static let maximumBodySize = 1 << 32

    /// URLRequest's default `timeoutInterval`: a request with another value chose its own.
    static let defaultRequestTimeout: TimeInterval = 60

    func load(_ urlRequest: URLRequest) async -> LoadResult {
        let anchor = WallClockAnchor()
        let started = Date()
        guard let url = urlRequest.url else {
            return LoadResult(error: URLError(.badURL))
        }
        var headers = NIOHTTP1.HTTPHeaders()
        var merged = additionalHeaders
        for header in urlRequest.headers { merged.update(header) }
        for header in merged { headers.add(name: header.name, value: header.value) }

        let idle = urlRequest.timeoutInterval != Self.defaultRequestTimeout ? urlRequest.timeoutInterval : requestTimeout
        var transportRequest = TransportRequest(
            method: NIOHTTP1.HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"), url: url, headers: headers,
            body: urlRequest.httpBody.map { .bytes(ByteBuffer(bytes: $0)) } ?? .none,
            timeouts: TransportTimeouts(
                connect: Self.timeAmount(idle), idle: Self.timeAmount(idle), total: Self.timeAmount(resourceTimeout)))
        transportRequest.headers = headers

        var result = LoadResult()
        do {
            // A DataRequest keeps the whole body, so the transport collects it on the event loop.
            let response = try await transport.execute(transportRequest, collectingUpTo: Self.maximumBodySize)
            let httpResponse = Self.httpURLResponse(response.head, url: url)
            result.response = httpResponse
            result.data = response.body.readableBytes > 0 ? Data(response.body.readableBytesView) : nil
            let completion = response.completion
            result.metrics = TaskMetrics(
                transactionMetrics: [TransactionMetrics(completion.metrics, request: urlRequest, response: httpResponse, clock: anchor)],
                taskInterval: DateInterval(start: started, end: Date()), redirectCount: 0)
        } catch let error as TransportError {
            result.error = error.urlError(for: url)
        } catch {
            result.error = URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error, NSURLErrorFailingURLErrorKey: url])
        }
        return result
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
