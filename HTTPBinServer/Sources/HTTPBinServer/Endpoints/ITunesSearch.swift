import Foundation
import HTTPTypes
import Hummingbird

/// `/search`: a stand-in for the iTunes Search API (`https://itunes.apple.com/search`), answering
/// from a fixed catalogue written from the API's documented JSON shape, so the StoreSearch example
/// runs offline; and `/artwork/:id/:size`, the items' artwork as PNG images.
///
/// `/search?term=…&entity=…&limit=…` returns `{"resultCount": n, "results": [...]}` with the items
/// whose artist, track or collection name contains the term (case-insensitively). `entity` narrows
/// the kinds as iTunes does: `musicTrack` to songs, `software` to apps, `ebook` to e-books, anything
/// else (or none) to every kind. `lang` and `country` are accepted and ignored. A missing `term`
/// answers 400, as iTunes does. `delay=seconds` (not iTunes') holds the answer back, up to 10 s, for
/// tests of a search that a newer one cancels.
enum ITunesSearch {
    /// One catalogue item: its JSON fields, with `artwork` standing for the artwork URLs' id.
    private struct Item {
        let artwork: Int?
        let fields: [String: Any]

        var kind: String? { fields["kind"] as? String }
        var searchableText: String {
            ["artistName", "trackName", "collectionName"].compactMap { fields[$0] as? String }.joined(separator: "\n").lowercased()
        }
    }

    /// Songs, an album, an app, an e-book and an audiobook without `kind`, shaped as iTunes sends them
    /// (built on each use: the values are not `Sendable`).
    private static var catalogue: [Item] {
        [
            Item(
                artwork: 579_373_079,
                fields: [
                    "wrapperType": "track", "kind": "song", "artistId": 3_996_865, "collectionId": 579_372_950, "trackId": 579_373_079,
                    "artistName": "Metallica", "collectionName": "Metallica", "trackName": "Enter Sandman",
                    "trackViewUrl": "https://music.apple.com/us/album/enter-sandman/579372950?i=579373079",
                    "collectionPrice": 9.99, "trackPrice": 1.29, "currency": "USD", "primaryGenreName": "Metal",
                    "releaseDate": "1991-07-29T07:00:00Z", "trackTimeMillis": 331_560, "country": "USA",
                ]),
            Item(
                artwork: 579_373_080,
                fields: [
                    "wrapperType": "track", "kind": "song", "artistId": 3_996_865, "collectionId": 579_372_950, "trackId": 579_373_080,
                    "artistName": "Metallica", "collectionName": "Metallica", "trackName": "Nothing Else Matters",
                    "trackViewUrl": "https://music.apple.com/us/album/nothing-else-matters/579372950?i=579373080",
                    "collectionPrice": 9.99, "trackPrice": 1.29, "currency": "USD", "primaryGenreName": "Metal",
                    "releaseDate": "1992-04-20T07:00:00Z", "trackTimeMillis": 388_280, "country": "USA",
                ]),
            Item(
                artwork: 167_239_465,
                fields: [
                    "wrapperType": "track", "kind": "song", "artistId": 3_996_865, "collectionId": 167_239_461, "trackId": 167_239_465,
                    "artistName": "Metallica", "collectionName": "Master of Puppets", "trackName": "Battery",
                    "trackViewUrl": "https://music.apple.com/us/album/battery/167239461?i=167239465",
                    "collectionPrice": 9.99, "trackPrice": 1.29, "currency": "USD", "primaryGenreName": "Metal",
                    "releaseDate": "1986-03-03T08:00:00Z", "trackTimeMillis": 312_640, "country": "USA",
                ]),
            Item(
                artwork: 167_239_461,
                fields: [
                    "wrapperType": "collection", "kind": "album", "collectionType": "Album", "artistId": 3_996_865,
                    "collectionId": 167_239_461, "artistName": "Metallica", "collectionName": "Master of Puppets",
                    "collectionViewUrl": "https://music.apple.com/us/album/master-of-puppets/167239461",
                    "collectionPrice": 9.99, "currency": "USD", "primaryGenreName": "Metal", "trackCount": 8, "country": "USA",
                ]),
            Item(
                artwork: 1_094_591_345,
                fields: [
                    "wrapperType": "software", "kind": "software", "artistId": 1_083_804_853, "trackId": 1_094_591_345,
                    "artistName": "Niantic, Inc.", "trackName": "Pokémon GO", "sellerName": "Niantic, Inc.",
                    "trackViewUrl": "https://apps.apple.com/us/app/pok%C3%A9mon-go/id1094591345",
                    "price": 0.0, "formattedPrice": "Free", "currency": "USD", "primaryGenreName": "Games",
                    "genres": ["Games", "Adventure"], "version": "0.331.0",
                ]),
            Item(
                artwork: 395_542_593,
                fields: [
                    "wrapperType": "ebook", "kind": "ebook", "artistId": 2_258_010, "trackId": 395_542_593,
                    "artistName": "Stephen King", "trackName": "The Shining",
                    "trackViewUrl": "https://books.apple.com/us/book/the-shining/id395542593",
                    "price": 8.99, "formattedPrice": "$8.99", "currency": "USD", "genres": ["Horror", "Books", "Fiction & Literature"],
                    "releaseDate": "1977-01-28T08:00:00Z",
                ]),
            Item(
                artwork: 1_440_416_711,
                fields: [
                    // Audiobooks come without `kind`, as the StoreSearch chapter found.
                    "wrapperType": "audiobook", "artistId": 2_258_010, "collectionId": 1_440_416_711,
                    "artistName": "Stephen King", "collectionName": "Carrie (Unabridged)",
                    "collectionViewUrl": "https://books.apple.com/us/audiobook/carrie-unabridged/id1440416711",
                    "collectionPrice": 14.95, "currency": "USD", "primaryGenreName": "Fiction",
                    "releaseDate": "2005-07-12T07:00:00Z",
                ]),
        ]
    }

    /// The kinds each `entity` keeps; an entity not named here keeps every kind.
    private static let kindsByEntity: [String: Set<String>] = [
        "musicTrack": ["song"], "song": ["song"], "software": ["software"], "ebook": ["ebook"], "album": ["album"],
    ]

    static func search(_ ex: Exchange) async throws -> Response {
        try ex.require(.get)
        guard ex.segments.count == 1 else { throw HTTPBinError(.notFound) }
        if let delay = ex.queryValue("delay").flatMap(Double.init), delay > 0 { try await ex.pause(min(delay, 10)) }
        guard let term = ex.queryValue("term") else {
            return try ex.json(
                ["errorMessage": "Invalid value(s) for key(s): [term]", "queryParameters": ex.echoedArgs], status: .badRequest)
        }
        let limit = ex.queryValue("limit").flatMap(Int.init).map { min(max($0, 1), 200) } ?? 50
        let words = term.lowercased().split(whereSeparator: \.isWhitespace)
        let kinds = kindsByEntity[ex.queryValue("entity") ?? ""]
        let matches = catalogue.filter { item in
            let text = item.searchableText
            return !words.isEmpty && words.allSatisfy { text.contains($0) } && (kinds.map { item.kind.map($0.contains) ?? false } ?? true)
        }
        let results = matches.prefix(limit).map { item -> [String: Any] in
            var fields = item.fields
            if let id = item.artwork {
                for size in [30, 60, 100] { fields["artworkUrl\(size)"] = ex.absoluteURL("/artwork/\(id)/\(size)x\(size)bb.png") }
            }
            return fields
        }
        return try ex.json(["resultCount": results.count, "results": results])
    }

    /// `/artwork/:id/:size`: a PNG image for any id the catalogue has.
    static func artwork(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        guard rest.count == 2, let id = Int(rest[0]), catalogue.contains(where: { $0.artwork == id }) else {
            throw HTTPBinError(.notFound)
        }
        return ex.bytes(try Images.png(), contentType: "image/png")
    }
}
