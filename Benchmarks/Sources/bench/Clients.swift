import AlamofireNIO
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFileSystem
import NIOSSL
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP client under test: fetch a URL's body, the way its users would.
protocol BenchClient: Sendable {
    var name: String { get }
    func data(_ url: URL) async throws -> Data
    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T
    /// Streams the body into the file at `destination`.
    func download(_ url: URL, to destination: URL) async throws
    /// Sends the file with PUT, streamed from disk.
    func upload(_ file: URL, to url: URL) async throws
    /// Sends the file with PUT as the one part of a `multipart/form-data` body (W7).
    func multipartUpload(_ file: URL, to url: URL) async throws
    /// Streams the body as `Data` chunks and returns how many bytes came (W8).
    func stream(_ url: URL) async throws -> Int
    func shutdown() async throws
}

/// Fails a run whose response was not what the workload expects.
struct UnexpectedResponse: Error, CustomStringConvertible {
    let description: String
}

struct AlamofireNIOClient: BenchClient {
    let name = "AlamofireNIO"
    let session: Session

    /// With `attachingPolicies`, the session gets a cookie storage of its own (empty: nothing to send
    /// to this host) and an event monitor counting finished requests on a queue of its own (W1P).
    init(maximumConnectionsPerHost: Int, attachingPolicies: Bool = false, protocolChoice: BenchProtocol = .plain) {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        // Every request goes on the wire, as with AsyncHTTPClient: nginx's validators would otherwise
        // let the cache answer (or revalidate) the repeated GETs.
        configuration.urlCache = nil
        guard attachingPolicies else {
            // The benchmark's CA is trusted for the HTTPS workloads (W9, W2T) only.
            let roots = protocolChoice == .plain ? [] : [BenchTLS.authority]
            session = Session(configuration: configuration, additionalTrustRoots: roots, allowsHTTP2: protocolChoice != .tlsHTTP1)
            return
        }
        // Nothing is stored in it, so nothing is written to disk.
        configuration.httpCookieStorage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "AlamofireNIO.bench.W1P")
        session = Session(configuration: configuration, eventMonitors: [FinishedRequestCounter()])
    }

    func data(_ url: URL) async throws -> Data {
        try await session.request(url).serializingData().value
    }

    func decode<T: Decodable & Sendable>(_ type: T.Type, _ url: URL) async throws -> T {
        try await session.request(url).serializingDecodable(T.self).value
    }

    func download(_ url: URL, to destination: URL) async throws {
        _ = try await session.download(url, to: { _, _ in (destination, [.removePreviousFile]) }).validate()
            .serializingDownloadedFileURL().value
    }

    func upload(_ file: URL, to url: URL) async throws {
        _ = try await session.upload(file, to: url, method: .put).validate().serializingData(emptyResponseCodes: [200, 201, 204]).value
    }

    func shutdown() async throws {}
}

/// An event monitor with one event to handle, for W1P. Its queue is its own, as a server's would
/// be: Alamofire's default, the main queue, measures the main thread's wake-ups instead.
final class FinishedRequestCounter: EventMonitor, Sendable {
    let finished = Atomic<Int>(0)
    let queue = DispatchQueue(label: "FinishedRequestCounter")

    func requestDidFinish(_ request: Request) {
        finished.add(1, ordering: .relaxed)
    }
}

struct AsyncHTTPClientClient: BenchClient {
    let name = "AsyncHTTPClient"
    let client: HTTPClient

    init(maximumConnectionsPerHost: Int, protocolChoice: BenchProtocol = .plain) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerHost
        if protocolChoice != .plain {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([BenchTLS.authorityForNIOSSL])
            configuration.tlsConfiguration = tls
            configuration.httpVersion = protocolChoice == .http2 ? .automatic : .http1Only
        }
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

    func download(_ url: URL, to destination: URL) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
        guard response.status == .ok else { throw UnexpectedResponse(description: "status \(response.status)") }
        try await FileSystem.shared.withFileHandle(forWritingAt: FilePath(destination.path), options: .newFile(replaceExisting: true)) {
            handle in
            try await handle.withBufferedWriter(capacity: .mebibytes(1)) { writer in
                for try await chunk in response.body { try await writer.write(contentsOf: chunk) }
            }
        }
    }

    func upload(_ file: URL, to url: URL) async throws {
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.path)) { handle in
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .PUT
            request.body = .stream(handle.readChunks(chunkLength: .kibibytes(64)), length: .known(Int64(size)))
            let response = try await client.execute(request, timeout: .seconds(600))
            guard (200..<300).contains(response.status.code) else { throw UnexpectedResponse(description: "status \(response.status)") }
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    }

    func shutdown() async throws { try await client.shutdown() }
}

struct URLSessionClient: BenchClient {
    let name = "URLSession"
    let session: URLSession

    init(maximumConnectionsPerHost: Int) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.urlCache = nil
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

    func download(_ url: URL, to destination: URL) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            session.downloadTask(with: url) { location, response, error in
                do {
                    if let error { throw error }
                    guard let location, (response as? HTTPURLResponse)?.statusCode == 200 else {
                        throw UnexpectedResponse(description: "no file or not 200")
                    }
                    try? FileManager.default.removeItem(at: destination)
                    try FileManager.default.moveItem(at: location, to: destination)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.resume()
        }
    }

    func upload(_ file: URL, to url: URL) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            session.uploadTask(with: request, fromFile: file) { _, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
                    return continuation.resume(throwing: UnexpectedResponse(description: "not 2xx"))
                }
                continuation.resume()
            }.resume()
        }
    }

    func shutdown() async throws { session.finishTasksAndInvalidate() }
}
