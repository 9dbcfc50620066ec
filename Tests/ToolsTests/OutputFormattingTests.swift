import AFCommandLine
import AlamofireNIO
import Foundation
import Testing

/// `af`'s JSON reading and printing, its exchange printer and its progress bar, as values.
@Suite struct OutputFormattingTests {
    @Test func jsonKeepsKeyOrderAndNumbersAsWritten() throws {
        let value = try JSONValue(
            parsing: Data(#"{"z": 1.50, "a": [true, null, "\u00e9\n"], "m": {}, "e": [], "big": 12345678901234567890}"#.utf8))
        #expect(value.serialized == #"{"z":1.50,"a":[true,null,"é\n"],"m":{},"e":[],"big":12345678901234567890}"#)
        #expect(
            value.prettyPrinted() == """
                {
                    "z": 1.50,
                    "a": [
                        true,
                        null,
                        "é\\n"
                    ],
                    "m": {},
                    "e": [],
                    "big": 12345678901234567890
                }
                """)
    }

    @Test func coloursWrapEachToken() throws {
        let value = try JSONValue(parsing: Data(#"{"k": "v", "n": 1, "b": false}"#.utf8))
        let escape = "\u{1B}["
        #expect(
            value.prettyPrinted(style: .colored) == """
                {
                    \(escape)34m"k"\(escape)0m: \(escape)33m"v"\(escape)0m,
                    \(escape)34m"n"\(escape)0m: \(escape)36m1\(escape)0m,
                    \(escape)34m"b"\(escape)0m: \(escape)35mfalse\(escape)0m
                }
                """)
    }

    @Test func surrogatePairsAndEscapesAreDecoded() throws {
        #expect(try JSONValue(parsing: Data(#""\ud83d\ude80 \"q\" \\ \/""#.utf8)) == .string("🚀 \"q\" \\ /"))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"\\x\"", "\"a", "[1] 2", "\"\u{01}\""])
    func malformedJSONIsRefused(text: String) {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue(parsing: Data(text.utf8)) }
    }

    @Test func deepNestingIsRefusedInsteadOfExhaustingTheStack() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = #expect(throws: JSONValue.SyntaxError.self) { try JSONValue(parsing: Data(deep.utf8)) }
        #expect(error?.message == "nested too deeply")
        let allowed = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(throws: Never.self) { try JSONValue(parsing: Data(allowed.utf8)) }
    }

    @Test func printedPartsAreReadFromHTTPiesLetters() throws {
        #expect(try PrintedParts(letters: "Hb") == [.requestHeaders, .responseBody])
        #expect(try PrintedParts(letters: "HBhbm") == [.requestHeaders, .requestBody, .responseHeaders, .responseBody, .metadata])
        #expect(throws: RequestItem.ParseError.self) { try PrintedParts(letters: "x") }
    }

    @Test func theResponseHeadHasTheStatusLineAndSortedHeaders() throws {
        let response = try #require(
            HTTPURLResponse(
                url: URL(string: "http://example.org/")!, statusCode: 404, httpVersion: "HTTP/1.1",
                headerFields: ["Server": "test", "Content-Type": "text/plain"]))
        let printer = ExchangePrinter(style: .plain, formatsBodies: true)
        #expect(printer.responseHead(response, protocolName: "h2") == "HTTP/2 404 Not Found\nContent-Type: text/plain\nServer: test")
        #expect(printer.responseHead(response, protocolName: nil).hasPrefix("HTTP/1.1 404 Not Found\n"))
    }

    @Test func theRequestHeadHasTheTargetHostAndHeaders() throws {
        var request = URLRequest(url: URL(string: "http://example.org:8080/a/b?c=d")!)
        request.httpMethod = "PATCH"
        request.setValue("1", forHTTPHeaderField: "X-B")
        let printer = ExchangePrinter(style: .plain, formatsBodies: false)
        let head = printer.requestHead(
            request, defaults: [.userAgent("af/1"), HTTPHeader(name: "X-B", value: "default")], protocolName: nil)
        #expect(head == "PATCH /a/b?c=d HTTP/1.1\nHost: example.org:8080\nUser-Agent: af/1\nX-B: 1")
    }

    @Test func bodiesAreFormattedByTheirTypeAndBinaryIsNotShownOnATerminal() {
        let printer = ExchangePrinter(style: .plain, formatsBodies: true)
        #expect(
            printer.body(Data(#"{"a":1}"#.utf8), contentType: "application/json; charset=utf-8", toTerminal: true) == "{\n    \"a\": 1\n}")
        #expect(printer.body(Data(#"{"a":1}"#.utf8), contentType: "text/plain", toTerminal: true) == #"{"a":1}"#)
        #expect(printer.body(Data(#"{"a":1"#.utf8), contentType: "application/json", toTerminal: true) == #"{"a":1"#)
        #expect(
            printer.body(Data([0xFF, 0x00, 0x01]), contentType: "application/octet-stream", toTerminal: true) == ExchangePrinter.binaryNote)
        #expect(printer.body(Data([0xFF, 0x00, 0x01]), contentType: nil, toTerminal: false) == nil)
    }

    @Test func theProgressLineShowsPercentBarBytesRateAndTimeLeft() {
        let bar = ProgressBar(width: 80)
        let half = bar.line(transferred: 1_500_000, total: 3_000_000, elapsed: 1)
        #expect(half == "  50% [==================>                 ] 1.5 MB / 3.0 MB  1.5 MB/s  ETA 0:01")
        #expect(half.count == 80)
        let start = bar.line(transferred: 0, total: 3_000_000, elapsed: 0)
        #expect(start == "   0% [>                                         ] 0 B / 3.0 MB  0 B/s  ETA -:--")
        #expect(start.count == 80)
        #expect(bar.line(transferred: 2048, total: nil, elapsed: 2) == "  2.0 kB  1.0 kB/s")
        #expect(bar.summary(bytes: 3_000_000, elapsed: 1.5) == "Done. 3.0 MB in 1.50s (2.0 MB/s)")
        // A continued file: the bytes on disk count towards the bar, not the rate.
        let continued = bar.line(transferred: 1_000_000, alreadyOnDisk: 2_000_000, total: 4_000_000, elapsed: 1)
        #expect(continued.hasPrefix("  75% [") && continued.hasSuffix("] 3.0 MB / 4.0 MB  1.0 MB/s  ETA 0:01"))
        #expect(ProgressBar.bytes(999) == "999 B")
        #expect(ProgressBar.bytes(1_250_000_000) == "1.2 GB")
    }
}
