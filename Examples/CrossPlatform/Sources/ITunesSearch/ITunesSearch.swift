// The same source on every platform: Alamofire on Apple's, AlamofireNIO (aliased as the module
// `Alamofire` by Package.swift) on Linux.
import Alamofire
import Foundation

/// One item of the iTunes Search API's answer.
public struct SearchResult: Decodable, Sendable, Equatable {
    public var kind: String?
    public var trackName: String?
    public var collectionName: String?
    public var artistName: String?
    public var trackPrice: Double?
    public var currency: String?

    /// The track's name, else the collection's.
    public var name: String { trackName ?? collectionName ?? "" }
}

/// A client of the iTunes Search API, written against Alamofire's API alone.
public struct ITunesSearchClient: Sendable {
    /// The answer's envelope.
    struct Envelope: Decodable {
        var resultCount: Int
        var results: [SearchResult]
    }

    /// The session requests go through; tests give one whose configuration stubs the network.
    public let session: Alamofire.Session
    public let endpoint: URL

    public init(session: Session = .default, endpoint: URL = URL(string: "https://itunes.apple.com/search")!) {
        self.session = session
        self.endpoint = endpoint
    }

    /// The request for `term` in `entity` (`""` for everything), as the iTunes Search API wants it.
    public func request(term: String, entity: String = "", limit: Int = 200) -> DataRequest {
        session.request(
            endpoint, parameters: ["term": term, "limit": "\(limit)", "entity": entity],
            encoder: URLEncodedFormParameterEncoder.default
        )
        .validate()
    }

    /// Searches and returns the results sorted by name.
    public func search(term: String, entity: String = "") async throws -> [SearchResult] {
        let envelope = try await request(term: term, entity: entity).serializingDecodable(Envelope.self).value
        return envelope.results.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }
}
