import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1

/// A response read to its end.
struct Fetched {
    var head: HTTPResponseHead
    var body: ByteBuffer
    var completion: ExchangeCompletion

    var status: Int { Int(head.status.code) }
    var text: String { String(buffer: body) }
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
    }
    var metrics: ExchangeMetrics { completion.metrics }
}

extension HTTPTransport {
    /// Runs a request and reads the whole response.
    func fetch(_ request: TransportRequest) async throws -> Fetched {
        let response = try await execute(request)
        let body = try await response.body.collect()
        return Fetched(head: response.head, body: body, completion: try await response.finished())
    }

    func fetch(
        _ url: URL, _ method: HTTPMethod = .GET, body: TransportRequest.Body = .none, timeouts: TransportTimeouts = .init()
    )
        async throws -> Fetched
    {
        try await fetch(TransportRequest(method: method, url: url, body: body, timeouts: timeouts))
    }
}

/// A transport for one test; `configure` adjusts its settings.
func makeTransport(_ configure: (inout HTTPTransport.Configuration) -> Void = { _ in }) -> HTTPTransport {
    var configuration = HTTPTransport.Configuration()
    configure(&configuration)
    return HTTPTransport(configuration: configuration)
}

/// The transport error an operation fails with, or nil if it fails otherwise or not at all.
func transportError(_ operation: () async throws -> some Any) async -> TransportError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        return nil
    }
}
