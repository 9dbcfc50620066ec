import Foundation
import HTTPBinServer
import Testing

/// The `storesearch` program, end to end against the bundled server.
@Suite struct StoreSearchCommandTests {
    @Test func printsATableOfResultsSortedByName() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run(
                "storesearch", ["--endpoint", server.url("/search").absoluteString, "--category", "music", "metallica"])
            #expect(run.status == 0)
            let lines = run.output.split(separator: "\n").map(String.init)
            // The price column's width depends on the locale's currency format.
            #expect(lines.first?.split(separator: " ") == ["Name", "Artist", "Kind", "Price", "Genre"])
            #expect(lines.first?.hasPrefix("Name                  Artist     Kind  Price") == true)
            #expect(
                lines.dropFirst(2).map { $0.prefix(20).trimmingCharacters(in: .whitespaces) } == [
                    "Battery", "Enter Sandman", "Nothing Else Matters",
                ])
            #expect(lines.dropFirst(2).allSatisfy { $0.contains("Metallica  Song") && $0.contains("1.29") && $0.hasSuffix("Metal") })
            #expect(run.errors.isEmpty)
        }
    }

    @Test func printsJSONAndDownloadsArtworkOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let arguments = ["--endpoint", server.url("/search").absoluteString, "--json", "--artwork", directory.path, "stephen", "king"]
            let first = try await run("storesearch", arguments)
            #expect(first.status == 0)
            #expect(first.errors == "Artwork: 2 downloaded, 0 already in \(directory.path)\n")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [[String: Any]])
            #expect(rows.map { $0["name"] as? String } == ["Carrie (Unabridged)", "The Shining"])
            #expect(rows.map { $0["kind"] as? String } == ["Audio Book", "E-Book"])
            #expect(rows.map { $0["price"] as? Double } == [14.95, 8.99])
            for row in rows {
                let file = try #require(row["artworkFile"] as? String)
                #expect(FileManager.default.fileExists(atPath: file))
            }
            let second = try await run("storesearch", arguments)
            #expect(second.errors == "Artwork: 0 downloaded, 2 already in \(directory.path)\n")
            #expect(second.output == first.output)
        }
    }

    @Test func nothingFoundIsSaidAndIsNoError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("storesearch", ["--endpoint", server.url("/search").absoluteString, "zzzz"])
            #expect(run.status == 0)
            #expect(run.output == "Nothing Found\n")
        }
    }

    @Test(arguments: [
        ("/status/500", "storesearch: the search failed: Response status code was unacceptable: 500.\n"),
        ("/html", "storesearch: the search failed: Response could not be decoded because of error:\n"),
    ])
    func serverErrorsEndWithStatusOneAndAMessage(path: String, message: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("storesearch", ["--endpoint", server.url(path).absoluteString, "metallica"])
            #expect(run.status == 1)
            #expect(run.output.isEmpty)
            #expect(run.errors.hasPrefix(message))
        }
    }

    @Test func anUnreachableServerAndATimeoutEndWithStatusOne() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let refused = try await run("storesearch", ["--endpoint", "http://127.0.0.1:1/search", "metallica"])
            #expect(refused.status == 1)
            #expect(refused.errors.hasPrefix("storesearch: the search failed: URLSessionTask failed with error:"))
            let slow = try await run("storesearch", ["--endpoint", server.url("/search?delay=3").absoluteString, "--timeout", "0.3", "x"])
            #expect(slow.status == 1)
            #expect(slow.errors.hasPrefix("storesearch: the search failed: URLSessionTask failed with error:"))
        }
    }

    @Test func badArgumentsAreRefusedWithUsage() async throws {
        let noTerm = try await run("storesearch", [])
        #expect(noTerm.status == 64)
        #expect(noTerm.errors.contains("USAGE: storesearch"))
        let badLimit = try await run("storesearch", ["--limit", "0", "x"])
        #expect(badLimit.status == 64)
        #expect(badLimit.errors.contains("--limit must be between 1 and 200."))
        let badCategory = try await run("storesearch", ["--category", "films", "x"])
        #expect(badCategory.status == 64)
    }
}
