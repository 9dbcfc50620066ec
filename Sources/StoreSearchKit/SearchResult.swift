import Foundation

/// The iTunes Search API's answer: how many results, and the results.
public struct ResultArray: Codable, Sendable, Equatable {
    /// How many results the answer holds.
    public var resultCount: Int
    /// The results, in the server's order.
    public var results: [SearchResult]

    /// Creates an answer.
    public init(resultCount: Int, results: [SearchResult]) {
        self.resultCount = resultCount
        self.results = results
    }
}

/// One item of the iTunes Search API's answer, decoded as the StoreSearch chapter does: the fields
/// each kind of item has under its own key (a song's `trackPrice`, an album's `collectionPrice`, an
/// app's or e-book's `price`; an e-book's `genres` list for everyone else's `primaryGenreName`) are
/// optional, and computed properties pick the one that is there.
public struct SearchResult: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The item's kind as iTunes names it (`song`, `software`, `ebook`…); audiobooks have none.
    public var kind: String?
    /// The artist's (or author's, or developer's) name.
    public var artistName: String?
    /// The track's name: songs, apps and e-books have one.
    public var trackName: String?
    /// The store page of a track.
    public var trackViewUrl: String?
    /// The price of a track.
    public var trackPrice: Double?
    /// The collection's name: albums and audiobooks have only this one.
    public var collectionName: String?
    /// The store page of a collection.
    public var collectionViewUrl: String?
    /// The price of a collection.
    public var collectionPrice: Double?
    /// The price of an app or an e-book.
    public var itemPrice: Double?
    /// The ISO 4217 code of the prices' currency.
    public var currency: String?
    /// The small artwork's URL (60×60).
    public var imageSmall: String?
    /// The large artwork's URL (100×100).
    public var imageLarge: String?
    /// The genre of everything but e-books.
    public var itemGenre: String?
    /// The genres of an e-book.
    public var bookGenre: [String]?

    /// The JSON keys, as the chapter maps them.
    enum CodingKeys: String, CodingKey {
        case imageSmall = "artworkUrl60"
        case imageLarge = "artworkUrl100"
        case itemGenre = "primaryGenreName"
        case bookGenre = "genres"
        case itemPrice = "price"
        case kind, artistName, currency
        case trackName, trackPrice, trackViewUrl
        case collectionName, collectionViewUrl, collectionPrice
    }

    /// Creates a result; every field is optional, as in the API's answers.
    public init(
        kind: String? = nil, artistName: String? = nil, trackName: String? = nil, trackViewUrl: String? = nil,
        trackPrice: Double? = nil, collectionName: String? = nil, collectionViewUrl: String? = nil,
        collectionPrice: Double? = nil, itemPrice: Double? = nil, currency: String? = nil, imageSmall: String? = nil,
        imageLarge: String? = nil, itemGenre: String? = nil, bookGenre: [String]? = nil
    ) {
        self.kind = kind
        self.artistName = artistName
        self.trackName = trackName
        self.trackViewUrl = trackViewUrl
        self.trackPrice = trackPrice
        self.collectionName = collectionName
        self.collectionViewUrl = collectionViewUrl
        self.collectionPrice = collectionPrice
        self.itemPrice = itemPrice
        self.currency = currency
        self.imageSmall = imageSmall
        self.imageLarge = imageLarge
        self.itemGenre = itemGenre
        self.bookGenre = bookGenre
    }

    /// The track's name, else the collection's, else empty.
    public var name: String { trackName ?? collectionName ?? "" }

    /// The store page: the track's, else the collection's, else empty.
    public var storeURL: String { trackViewUrl ?? collectionViewUrl ?? "" }

    /// The track's price, else the collection's, else the item's, else 0.
    public var price: Double { trackPrice ?? collectionPrice ?? itemPrice ?? 0 }

    /// The genre, or an e-book's genres joined by commas.
    public var genre: String {
        if let itemGenre { return itemGenre }
        if let bookGenre { return bookGenre.joined(separator: ", ") }
        return ""
    }

    /// The artist's name, or empty.
    public var artist: String { artistName ?? "" }

    /// The kind as the chapter shows it to people ("Song", "App", "E-Book"…); an item without a kind
    /// is an audiobook, and a kind the chapter does not know is "Unknown".
    public var type: String {
        switch kind ?? "audiobook" {
        case "album": "Album"
        case "audiobook": "Audio Book"
        case "book": "Book"
        case "ebook": "E-Book"
        case "feature-movie": "Movie"
        case "music-video": "Music Video"
        case "podcast": "Podcast"
        case "software": "App"
        case "song": "Song"
        case "tv-episode": "TV Episode"
        default: "Unknown"
        }
    }

    /// `Kind: …, Name: …, Artist Name: …`, as the chapter prints a result.
    public var description: String { "Kind: \(kind ?? "None"), Name: \(name), Artist Name: \(artistName ?? "None")" }

    /// Whether `lhs` sorts before `rhs`: by name, as the Finder sorts (`localizedStandardCompare`).
    public static func < (lhs: SearchResult, rhs: SearchResult) -> Bool {
        lhs.name.localizedStandardCompare(rhs.name) == .orderedAscending
    }
}
