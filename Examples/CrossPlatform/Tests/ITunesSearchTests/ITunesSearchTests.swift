import Alamofire
import Foundation
import ITunesSearch
import Testing

/// Answers every request with the canned search result below and remembers the URLs it was asked for.
final class StubSearchProtocol: URLProtocol {
    nonisolated(unsafe) static var requestedURLs: [URL] = []
    static let lock = NSLock()

    static let body = Data(
        """
        {"resultCount": 2, "results": [
          {"kind": "song", "trackName": "Yesterday", "artistName": "The Beatles", "trackPrice": 1.29, "currency": "USD"},
          {"collectionName": "Abbey Road", "artistName": "The Beatles", "currency": "USD"}
        ]}
        """.utf8)

    override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "itunes.apple.com" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        Self.lock.withLock { Self.requestedURLs.append(url) }
        let status = url.query?.contains("term=fail") == true ? 500 : 200
        let response = HTTPURLResponse(
            url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

@Suite(.serialized) struct ITunesSearchTests {
    let session: Session = {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [StubSearchProtocol.self]
        return Session(configuration: configuration)
    }()

    @Test func searchEncodesTheQueryAndSortsByName() async throws {
        let client = ITunesSearchClient(session: session)
        let results = try await client.search(term: "the beatles", entity: "musicTrack")
        #expect(results.map(\.name) == ["Abbey Road", "Yesterday"])
        #expect(results.last?.trackPrice == 1.29)
        // Other tests run alongside: find this one's request by its term.
        let url = try #require(
            StubSearchProtocol.lock.withLock { StubSearchProtocol.requestedURLs }.last { $0.query?.contains("beatles") == true })
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(
            Set(items) == [
                URLQueryItem(name: "term", value: "the beatles"), URLQueryItem(name: "limit", value: "200"),
                URLQueryItem(name: "entity", value: "musicTrack"),
            ])
    }

    @Test func aServerErrorIsAnAFError() async throws {
        let client = ITunesSearchClient(session: session)
        do {
            _ = try await client.search(term: "fail")
            Issue.record("a 500 must fail validation")
        } catch let error as AFError {
            #expect(error.isResponseValidationError)
            #expect(error.responseCode == 500)
        }
    }
}

/// Records the metrics Alamofire reports, through the event monitor's requirement spelled as in Alamofire.
final class MetricsRecorder: EventMonitor, @unchecked Sendable {
    let queue = DispatchQueue(label: "MetricsRecorder")
    private let lock = NSLock()
    private var gathered: [URLSessionTaskMetrics] = []

    var metrics: [URLSessionTaskMetrics] { lock.withLock { gathered } }

    func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics) {
        lock.withLock { gathered.append(metrics) }
    }
}

@Suite(.serialized) struct AlamofireSpellingTests {
    @Test func metricsAreNamedAsInAlamofire() async throws {
        let recorder = MetricsRecorder()
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [StubSearchProtocol.self]
        let session = Alamofire.Session(configuration: configuration, eventMonitors: [recorder])
        let response = await ITunesSearchClient(session: session).request(term: "metrics").serializingData().response
        let metrics: URLSessionTaskMetrics? = response.metrics
        #expect(metrics != nil)
        #expect(metrics?.transactionMetrics.count == 1)
        // The monitor's queue has run the event before the response was delivered.
        recorder.queue.sync {}
        #expect(recorder.metrics.count == 1)
    }
}
