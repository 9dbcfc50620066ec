import AFSynchronization
import AlamofireNIO
import Foundation
import HTTPBinServer
import StoreSearchKit
import Synchronization
import TestWaits
import Testing

/// `Search` and `ArtworkCache` against the bundled server's `/search` and `/artwork`, iTunes
/// Search stand-ins answering from a catalogue written from the API's documented shape.
@Suite struct SearchTests {
    static func search(_ server: HTTPBinServer, path: String = "/search", session: Session = Session()) -> Search {
        Search(session: session, endpoint: server.url(path), locale: Locale(identifier: "nl_NL"))
    }

    static func results(_ state: Search.State) -> [SearchResult] {
        if case .results(let results) = state { return results }
        return []
    }

    @Test func theQueryCarriesTheTermLimitEntityLanguageAndCountry() {
        let search = Search(endpoint: URL(string: "http://127.0.0.1/search")!, locale: Locale(identifier: "nl_NL"), limit: 200)
        #expect(
            search.parameters(for: "pokemon go", category: .software) == [
                "term": "pokemon go", "limit": "200", "entity": "software", "lang": "nl_NL", "country": "NL",
            ])
        #expect(Search.Category.allCases.map(\.type) == ["", "musicTrack", "software", "ebook"])
    }

    @Test func theRequestIsEncodedWithAlamofiresURLEncoding() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server, path: "/get")
            let session = search.session
            let request = session.request(
                search.endpoint, parameters: search.parameters(for: "pokemon go", category: .software),
                encoder: URLEncodedFormParameterEncoder.default)
            let echoed = try await request.serializingData().value
            let url = try #require((try JSONSerialization.jsonObject(with: echoed) as? [String: Any])?["url"] as? String)
            #expect(url == "http://127.0.0.1:\(server.port)/get?country=NL&entity=software&lang=nl_NL&limit=200&term=pokemon%20go")
        }
    }

    @Test(arguments: [
        (Search.Category.all, "metallica", ["Battery", "Enter Sandman", "Master of Puppets", "Nothing Else Matters"]),
        (.music, "metallica", ["Battery", "Enter Sandman", "Nothing Else Matters"]),
        (.software, "pokemon", []),
        (.software, "pokémon go", ["Pokémon GO"]),
        (.ebooks, "stephen king", ["The Shining"]),
        (.all, "stephen king", ["Carrie (Unabridged)", "The Shining"]),
    ])
    func eachCategoryFindsItsKindsSortedByName(category: Search.Category, term: String, names: [String]) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server)
            let state = try await search.search(for: term, category: category)
            #expect(Self.results(state).map(\.name) == names)
            #expect(search.state == (names.isEmpty ? .noResults : state))
            #expect(search.lastError == nil)
        }
    }

    @Test func theAudiobookWithoutAKindDecodesWithItsCollectionsFields() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let results = Self.results(try await Self.search(server).search(for: "carrie", category: .all))
            let audiobook = try #require(results.first)
            #expect(results.count == 1)
            #expect(audiobook.kind == nil)
            #expect(audiobook.type == "Audio Book")
            #expect(audiobook.price == 14.95)
            #expect(audiobook.genre == "Fiction")
            #expect(audiobook.imageSmall == "http://127.0.0.1:\(server.port)/artwork/1440416711/60x60bb.png")
        }
    }

    @Test func performSearchReportsSuccessAndSetsTheStateAsTheChapterDoes() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server)
            let queue = DispatchQueue(label: "search.completion")
            let succeeded = try await completion { done in
                search.performSearch(for: "shining", category: .ebooks, queue: queue) { done($0) }
                #expect(search.state == .loading)
            }
            #expect(succeeded)
            #expect(Self.results(search.state).map(\.name) == ["The Shining"])
            // Empty text starts nothing.
            search.performSearch(for: "", category: .all, queue: queue) { _ in Issue.record("an empty search completed") }
            #expect(Self.results(search.state).map(\.name) == ["The Shining"])
        }
    }

    @Test func aNewSearchCancelsTheOneInFlight() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server, path: "/search?delay=0.5")
            let calls = Mutex<[Bool]>([])
            let queue = DispatchQueue(label: "search.completion")
            search.performSearch(for: "metallica", category: .all, queue: queue) { success in calls.withLock { $0.append(success) } }
            let state = try await search.search(for: "shining", category: .all)
            #expect(Self.results(state).map(\.name) == ["The Shining"])
            #expect(search.state == state)
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            // The first search was cancelled, and a cancelled search never calls back (the chapter's -999).
            #expect(calls.withLock { $0 }.isEmpty)
        }
    }

    @Test func aSupersededAsyncSearchThrowsExplicitlyCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server, path: "/search?delay=0.5")
            let first = Task { try await search.search(for: "metallica", category: .all) }
            try await withTimeout { while search.state != .loading { await Task.yield() } }
            _ = try await search.search(for: "shining", category: .all)
            let error = await #expect(throws: AFError.self) { try await first.value }
            #expect(error?.isExplicitlyCancelledError == true)
        }
    }

    @Test func aServerErrorFailsTheSearchAndResetsTheState() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server, path: "/status/500")
            let error = await #expect(throws: AFError.self) { try await search.search(for: "metallica", category: .all) }
            #expect(error?.responseCode == 500)
            #expect(search.state == .notSearchedYet)
            #expect(search.lastError?.responseCode == 500)
        }
    }

    @Test func malformedJSONFailsWithADecodingError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let search = Self.search(server, path: "/html")
            let error = await #expect(throws: AFError.self) { try await search.search(for: "metallica", category: .all) }
            #expect(error?.isResponseSerializationError == true)
            #expect(search.state == .notSearchedYet)
        }
    }

    @Test func aSlowServerTimesOut() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.af.default
            configuration.timeoutIntervalForRequest = 0.3
            let search = Self.search(server, path: "/search?delay=3", session: Session(configuration: configuration))
            let error = await #expect(throws: AFError.self) { try await search.search(for: "metallica", category: .all) }
            #expect((error?.underlyingError as? URLError)?.code == .timedOut)
        }
    }
}
