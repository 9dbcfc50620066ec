import Foundation
import StoreSearchKit
import Testing

/// `SearchResult` as the StoreSearch chapter decodes it: each kind's own keys, and the fallbacks.
@Suite struct SearchResultTests {
    /// One of each kind, written from the iTunes Search API's documented shape.
    static let answer = """
        {"resultCount": 6, "results": [
          {"wrapperType": "track", "kind": "song", "artistName": "Metallica", "trackName": "Enter Sandman",
           "collectionName": "Metallica", "trackPrice": 1.29, "collectionPrice": 9.99, "currency": "USD",
           "primaryGenreName": "Metal", "trackViewUrl": "https://music.example/track", "artworkUrl60": "http://a/60.png",
           "artworkUrl100": "http://a/100.png"},
          {"wrapperType": "collection", "kind": "album", "artistName": "Metallica", "collectionName": "Master of Puppets",
           "collectionPrice": 9.99, "currency": "USD", "primaryGenreName": "Metal", "collectionViewUrl": "https://music.example/album"},
          {"wrapperType": "software", "kind": "software", "artistName": "Niantic, Inc.", "trackName": "Pokémon GO",
           "price": 0.0, "currency": "USD", "primaryGenreName": "Games"},
          {"wrapperType": "ebook", "kind": "ebook", "artistName": "Stephen King", "trackName": "The Shining",
           "price": 8.99, "currency": "USD", "genres": ["Horror", "Fiction"]},
          {"wrapperType": "audiobook", "artistName": "Stephen King", "collectionName": "Carrie (Unabridged)",
           "collectionPrice": 14.95, "currency": "USD", "primaryGenreName": "Fiction"},
          {"wrapperType": "track", "kind": "feature-movie", "trackName": "A Film"}
        ]}
        """

    static func decoded() throws -> [SearchResult] {
        try JSONDecoder().decode(ResultArray.self, from: Data(answer.utf8)).results
    }

    @Test func namesComeFromTheTrackElseTheCollection() throws {
        #expect(
            try Self.decoded().map(\.name) == [
                "Enter Sandman", "Master of Puppets", "Pokémon GO", "The Shining", "Carrie (Unabridged)", "A Film",
            ])
    }

    @Test func pricesComeFromTrackThenCollectionThenItemPrice() throws {
        #expect(try Self.decoded().map(\.price) == [1.29, 9.99, 0, 8.99, 14.95, 0])
    }

    @Test func genresComeFromThePrimaryGenreElseAnEBooksGenres() throws {
        #expect(try Self.decoded().map(\.genre) == ["Metal", "Metal", "Games", "Horror, Fiction", "Fiction", ""])
    }

    @Test func kindsAreShownWithTheChaptersLabelsAndAMissingKindIsAnAudiobook() throws {
        #expect(try Self.decoded().map(\.type) == ["Song", "Album", "App", "E-Book", "Audio Book", "Movie"])
        #expect(SearchResult(kind: "interactive-booklet").type == "Unknown")
    }

    @Test func storeURLsArtworkAndArtistsAreRead() throws {
        let results = try Self.decoded()
        #expect(results.map(\.storeURL) == ["https://music.example/track", "https://music.example/album", "", "", "", ""])
        #expect(results[0].imageSmall == "http://a/60.png")
        #expect(results[0].imageLarge == "http://a/100.png")
        #expect(results[5].artist == "")
        #expect(results[4].description == "Kind: None, Name: Carrie (Unabridged), Artist Name: Stephen King")
    }

    @Test func resultsSortByNameAsTheFinderDoes() {
        let names = ["track 10", "Track 2", "apple", "Äpfel", "banana"].map { SearchResult(trackName: $0) }
        #expect(names.sorted(by: <).map(\.name) == ["Äpfel", "apple", "banana", "Track 2", "track 10"])
    }

    @Test func theTableShowsEachResultsNameArtistKindPriceAndGenre() throws {
        let table = ResultsTable(locale: Locale(identifier: "en_US"), maximumCellWidth: 12)
        let lines = table.lines(for: try Self.decoded().sorted(by: <))
        #expect(
            lines == [
                "Name          Artist        Kind        Price   Genre",
                "------------  ------------  ----------  ------  ------------",
                "A Film        Unknown       Movie       Free",
                "Carrie (Una…  Stephen King  Audio Book  $14.95  Fiction",
                "Enter Sandm…  Metallica     Song        $1.29   Metal",
                "Master of P…  Metallica     Album       $9.99   Metal",
                "Pokémon GO    Niantic, In…  App         Free    Games",
                "The Shining   Stephen King  E-Book      $8.99   Horror, Fic…",
            ])
    }
}
