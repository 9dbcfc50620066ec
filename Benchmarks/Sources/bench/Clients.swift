import AlamofireNIO
import AsyncHTTPClient
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP client under test: fetch a URL's body, the way its users would.
protocol BenchClient: Sendable {
    var name: String { get }
    func data(_ url: URL) async throws -> Data
    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T
    func shutdown() async throws
}

struct AlamofireNIOClient: BenchClient {
    let name = "AlamofireNIO"
    let session: Session

    init(maximumConnectionsPerHost: Int) {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        session = Session(configuration: configuration)
    }

    func data(_ url: URL) async throws -> Data {
        try await session.request(url).serializingData().value
    }

    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T {
        try await session.request(url).serializingDecodable(T.self).value
    }

    func shutdown() async throws {}
}

struct AsyncHTTPClientClient: BenchClient {
    let name = "AsyncHTTPClient"
    let client: HTTPClient

    init(maximumConnectionsPerHost: Int) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerHost
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func data(_ url: URL) async throws -> Data {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Data(body.readableBytesView)
    }

    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T {
        try JSONDecoder().decode(T.self, from: try await data(url))
    }

    func shutdown() async throws { try await client.shutdown() }
}

struct URLSessionClient: BenchClient {
    let name = "URLSession"
    let session: URLSession

    init(maximumConnectionsPerHost: Int) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        session = URLSession(configuration: configuration)
    }

    func data(_ url: URL) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: url) { data, _, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
            }.resume()
        }
    }

    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T {
        try JSONDecoder().decode(T.self, from: try await data(url))
    }

    func shutdown() async throws { session.finishTasksAndInvalidate() }
}
