import AlamofireNIO
import ArgumentParser
import Foundation
import StoreSearchKit

#if canImport(Glibc)
import Glibc
#endif

/// `storesearch`: the StoreSearch chapter's client on the command line. Searches the iTunes Store
/// (or `--endpoint`, such as the bundled server's `/search`) and prints the results as a table or
/// as JSON; `--artwork` downloads each result's artwork into a directory, reusing what is there.
@main
struct StoreSearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storesearch",
        abstract: "Search the iTunes Store for music, apps and books.",
        discussion: """
            Examples:
              storesearch metallica
              storesearch --category software --limit 20 pokemon go
              storesearch --endpoint http://127.0.0.1:8080/search --json stephen king
            """
    )

    /// The categories by the names the command takes.
    enum CategoryName: String, ExpressibleByArgument, CaseIterable {
        case all, music, software, ebook

        var category: Search.Category {
            switch self {
            case .all: .all
            case .music: .music
            case .software: .software
            case .ebook: .ebooks
            }
        }
    }

    @Option(name: .shortAndLong, help: "What to search: all, music, software or ebook.")
    var category: CategoryName = .all

    @Option(name: .shortAndLong, help: "The most results to ask for (1...200).")
    var limit: Int = 200

    @Option(name: .shortAndLong, help: "Download each result's artwork into this directory, reusing files already there.")
    var artwork: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(help: "The search URL.")
    var endpoint: String = Search.iTunesEndpoint.absoluteString

    @Option(help: "Seconds to wait for the server before giving up.")
    var timeout: Double = 30

    @Argument(help: "The words to search for.")
    var term: [String]

    func validate() throws {
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be between 1 and 200.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be more than 0.") }
        guard let url = URL(string: endpoint), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--endpoint must be an http or https URL: \(endpoint)")
        }
        guard !term.joined().trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("Give something to search for.") }
    }

    func run() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = timeout
        let session = Session(configuration: configuration)
        let search = Search(session: session, endpoint: URL(string: endpoint)!, limit: limit)
        let state: Search.State
        do {
            state = try await search.search(for: term.joined(separator: " "), category: category.category)
        } catch {
            throw fail("the search failed: \(error.localizedDescription)")
        }
        let results: [SearchResult]
        switch state {
        case .results(let found): results = found
        default: results = []
        }
        var artworkFiles: [String: String] = [:]
        if let artwork {
            artworkFiles = await downloadArtwork(of: results, into: URL(fileURLWithPath: artwork), session: session)
        }
        if json {
            let rows = results.map { ResultRow($0, artworkFile: $0.imageSmall.flatMap { artworkFiles[$0] }) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
        } else if results.isEmpty {
            print("Nothing Found")
        } else {
            ResultsTable().lines(for: results).forEach { print($0) }
        }
    }

    /// Downloads the small artwork of every result, four at a time, and returns each image's file by
    /// its URL. A failed image is reported on standard error and skipped.
    private func downloadArtwork(of results: [SearchResult], into directory: URL, session: Session) async -> [String: String] {
        let cache = ArtworkCache(directory: directory, session: session)
        let urls = Array(Set(results.compactMap(\.imageSmall))).sorted().compactMap(URL.init(string:))
        var files: [String: String] = [:]
        var cached = 0
        await withTaskGroup(of: (URL, Result<URL, AFError>, Bool).self) { group in
            var pending = urls[...]
            func startNext() {
                guard let url = pending.popFirst() else { return }
                group.addTask {
                    let wasCached = cache.cachedFile(for: url) != nil
                    do throws(AFError) { return (url, .success(try await cache.load(url)), wasCached) } catch {
                        return (url, .failure(error), wasCached)
                    }
                }
            }
            for _ in 0..<4 { startNext() }
            for await (url, outcome, wasCached) in group {
                switch outcome {
                case .success(let file):
                    files[url.absoluteString] = file.path
                    if wasCached { cached += 1 }
                case .failure(let error):
                    standardError("storesearch: artwork \(url.absoluteString): \(error.localizedDescription)")
                }
                startNext()
            }
        }
        standardError("Artwork: \(files.count - cached) downloaded, \(cached) already in \(directory.path)")
        return files
    }

    private func fail(_ message: String) -> ExitCode {
        standardError("storesearch: \(message)")
        return ExitCode(1)
    }
}

/// A result as `--json` prints it.
struct ResultRow: Encodable {
    var name: String
    var artist: String
    var kind: String
    var price: Double
    var currency: String?
    var genre: String
    var storeURL: String
    var artwork: String?
    var artworkFile: String?

    init(_ result: SearchResult, artworkFile: String?) {
        name = result.name
        artist = result.artist
        kind = result.type
        price = result.price
        currency = result.currency
        genre = result.genre
        storeURL = result.storeURL
        artwork = result.imageSmall
        self.artworkFile = artworkFile
    }
}

/// Writes a line to standard error.
func standardError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
