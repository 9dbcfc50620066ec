import Foundation
import Testing

@testable import AlamofireNIO

/// ServerSentEventParser: the WHATWG HTML standard's event stream interpretation, as plain values.
@Suite struct ServerSentEventParserTests {
    /// The whole stream in one chunk, then its end.
    static func events(_ bytes: [UInt8]) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        return try parser.parse(Data(bytes)) + parser.finish()
    }

    static func events(_ text: String) throws -> [ServerSentEvent] { try events(Array(text.utf8)) }

    // MARK: - The spec's examples

    @Test func dataLinesJoinWithLineFeeds() throws {
        #expect(try Self.events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func commentsIDsAndTheSpaceAfterTheColon() throws {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        #expect(
            try Self.events(stream) == [
                ServerSentEvent(id: "1", data: "first event"),
                // `id` with no value resets the ID to the empty string: no ID.
                ServerSentEvent(id: nil, data: "second event"),
                // Only one space is removed.
                ServerSentEvent(id: nil, data: " third event"),
            ])
    }

    @Test func anEmptyDataFieldStillDispatches() throws {
        // "data" alone is a data field with an empty value; the last block has no blank line.
        #expect(try Self.events("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test func theSpaceAfterTheColonIsOptional() throws {
        #expect(try Self.events("data:test\n\ndata: test\n\n") == [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")])
    }

    @Test func eventFieldsNameTheEventsType() throws {
        let stream = "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
        #expect(
            try Self.events(stream) == [
                ServerSentEvent(event: "add", data: "73857293"),
                ServerSentEvent(event: "remove", data: "2153"),
                ServerSentEvent(event: "add", data: "113411"),
            ])
    }

    @Test func theEventTypeResetsAfterEachDispatchAndDefaultsToMessage() throws {
        #expect(
            try Self.events("event: a\ndata: 1\n\ndata: 2\n\nevent\ndata: 3\n\nevent:\ndata: 4\n\n") == [
                ServerSentEvent(event: "a", data: "1"), ServerSentEvent(data: "2"), ServerSentEvent(data: "3"),
                ServerSentEvent(data: "4"),
            ])
        // A dispatch without data resets the type too.
        #expect(try Self.events("event: lost\n\ndata: x\n\n") == [ServerSentEvent(event: "message", data: "x")])
    }

    // MARK: - Fields

    @Test func theLastEventIDPersistsAcrossEventsUntilChanged() throws {
        var parser = ServerSentEventParser()
        #expect(parser.lastEventID == nil)
        let events = try parser.parse(Data("id: 42\ndata: a\n\ndata: b\n\nid: 43\ndata: c\n\ndata: d\n\n".utf8))
        #expect(events.map(\.id) == ["42", "42", "43", "43"])
        #expect(parser.lastEventID == "43")
        #expect(try parser.parse(Data("id\ndata: e\n\n".utf8)) == [ServerSentEvent(id: nil, data: "e")])
        #expect(parser.lastEventID == nil)
    }

    @Test func aBlankLineSetsTheLastEventIDEvenWithoutData() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Data("id: 7\n\n".utf8)).isEmpty)
        #expect(parser.lastEventID == "7")
        #expect(try parser.parse(Data("data: x\n\n".utf8)) == [ServerSentEvent(id: "7", data: "x")])
    }

    @Test func anIDContainingNULIsIgnored() throws {
        var parser = ServerSentEventParser()
        let events = try parser.parse(Data("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\nid: \u{0}\ndata: c\n\n".utf8))
        #expect(events.map(\.id) == ["1", "1", "1"])
        #expect(parser.lastEventID == "1")
    }

    @Test func retrySetsTheReconnectionTimeAndComesWithItsEvent() throws {
        var parser = ServerSentEventParser()
        #expect(parser.reconnectionTime == nil)
        let events = try parser.parse(Data("retry: 3000\ndata: a\n\ndata: b\n\nretry: 0500\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "a", retry: 3000), ServerSentEvent(data: "b")])
        #expect(parser.reconnectionTime == 500)
    }

    @Test(arguments: ["10s", "-1", "+1", "1 000", "1.5", "", " 500", "٣", "99999999999999999999999"])
    func retryThatIsNotAllASCIIDigitsIsIgnored(value: String) throws {
        var parser = ServerSentEventParser()
        let events = try parser.parse(Data("retry: 3000\n\nretry: \(value)\ndata: x\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "x")])
        #expect(parser.reconnectionTime == 3000)
    }

    @Test func commentsAreIgnoredAndOnlyTheFirstColonSplits() throws {
        #expect(try Self.events(":data: x\n: anything\n:\n\n").isEmpty)
        #expect(try Self.events("data: a:b: c\n:comment between\ndata::\n\n") == [ServerSentEvent(data: "a:b: c\n:")])
    }

    @Test func unknownAndMisspelledFieldsAreIgnored() throws {
        let stream = "foo: bar\nData: no\nDATA: no\ndata : no\n data: no\nevent : no\nid : no\nretry : 1\ndata: yes\n\n"
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Data(stream.utf8)) == [ServerSentEvent(data: "yes")])
        #expect(parser.lastEventID == nil)
        #expect(parser.reconnectionTime == nil)
    }

    @Test func aDispatchWithNoDataFiresNothing() throws {
        #expect(try Self.events("\n\n\nevent: x\n\nid: 1\n\nretry: 10\n\n: comment\n\n").isEmpty)
    }

    // MARK: - Bytes and lines

    @Test func crlfLFAndCREndLinesAlike() throws {
        let expected = [ServerSentEvent(id: "1", event: "e", data: "a\nb"), ServerSentEvent(id: "1", data: "c")]
        for ending in ["\r\n", "\n", "\r"] {
            let stream = ["id: 1", "event: e", "data: a", "data: b", "", "data: c", "", ""].joined(separator: ending)
            #expect(try Self.events(stream) == expected, "\(Array(ending.utf8))")
        }
        // Mixed, and LF then CR is two line ends, not one.
        #expect(try Self.events("data: a\r\ndata: b\rdata: c\n\r\n") == [ServerSentEvent(data: "a\nb\nc")])
        #expect(try Self.events("data: a\n\rdata: b\r\rdata: c\r\n\r\n").map(\.data) == ["a", "b", "c"])
    }

    @Test func aCRAtTheEndOfAChunkAndAnLFStartingTheNextAreOneLineEnd() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Data("data: a\r".utf8)).isEmpty)
        // Were the LF a line of its own, "a" would be dispatched here.
        #expect(try parser.parse(Data("\ndata: b\r".utf8)).isEmpty)
        #expect(try parser.parse(Data("\n\r".utf8)) == [ServerSentEvent(data: "a\nb")])
        // The CR ended a blank line; an LF arriving next belongs to it.
        #expect(try parser.parse(Data("\n".utf8)).isEmpty)
        #expect(try parser.parse(Data("data: c\n\n".utf8)) == [ServerSentEvent(data: "c")])
    }

    @Test func oneLeadingByteOrderMarkIsIgnored() throws {
        #expect(try Self.events("\u{FEFF}data: x\n\n") == [ServerSentEvent(data: "x")])
        // A second one is part of the first field's name, which then is no field we know.
        #expect(try Self.events("\u{FEFF}\u{FEFF}data: x\n\ndata: y\n\n") == [ServerSentEvent(data: "y")])
        // Elsewhere it is an ordinary character.
        #expect(try Self.events("data: a\n\n\u{FEFF}data: b\n\n") == [ServerSentEvent(data: "a")])
        #expect(try Self.events("data: \u{FEFF}x\n\n") == [ServerSentEvent(data: "\u{FEFF}x")])
        // Only at the start of the stream: a first line that is blank uses the chance up.
        #expect(try Self.events("\n\u{FEFF}data: x\n\n").isEmpty)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        var bytes = Array("data: ".utf8)
        bytes += [0xFF, 0x61, 0xE2, 0x82]  // An invalid byte, "a", a sequence cut short by the line end.
        bytes += Array("\nid: ".utf8)
        bytes.append(0xC3)  // Cut short by the line end.
        bytes += Array("\n\n".utf8)
        #expect(try Self.events(bytes) == [ServerSentEvent(id: "\u{FFFD}", data: "\u{FFFD}a\u{FFFD}")])
    }

    /// A stream with every kind of line end, a byte order mark, multi-byte characters and all fields: cut at every
    /// byte, and fed one byte at a time, it gives what it gives whole.
    @Test func everySplitOfTheStreamParsesAsTheWhole() throws {
        let stream =
            Array(
                "\u{FEFF}: comment\r\nretry: 1500\rid: é-1\nevent: 🚀 launch\r\ndata: first line, ünïcödé\r\ndata:second 🚀\r\r\n"
                    .utf8)
            + Array("data: \r\n\r\nid\ndata: x\n\nevent: y\r\rdata: after\r\n\rdata: dropped\r\n".utf8)
        var whole = ServerSentEventParser()
        let expected = try whole.parse(Data(stream)) + whole.finish()
        #expect(
            expected == [
                ServerSentEvent(id: "é-1", event: "🚀 launch", data: "first line, ünïcödé\nsecond 🚀", retry: 1500),
                ServerSentEvent(id: "é-1", data: ""),
                ServerSentEvent(id: nil, data: "x"),
                ServerSentEvent(id: nil, data: "after"),
            ])

        for cut in 0...stream.count {
            var parser = ServerSentEventParser()
            let events = try parser.parse(Data(stream[..<cut])) + parser.parse(Data(stream[cut...])) + parser.finish()
            #expect(events == expected, "cut at \(cut)")
            #expect(parser.lastEventID == whole.lastEventID)
            #expect(parser.reconnectionTime == 1500)
        }

        var byteByByte = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in stream { events += try byteByByte.parse(Data([byte])) }
        events += try byteByByte.parse(Data()) + byteByByte.finish()
        #expect(events == expected)
    }

    // MARK: - End of stream

    @Test func anEventWithoutItsBlankLineIsDiscardedAtTheEnd() throws {
        for stream in ["data: x", "data: x\n", "data: x\r\n", "event: e\ndata: x\nid: 9\n"] {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data(stream.utf8)).isEmpty, "\(stream)")
            #expect(parser.finish().isEmpty, "\(stream)")
            // The ID of an event never dispatched is not the last event ID.
            #expect(parser.lastEventID == nil, "\(stream)")
        }
    }

    @Test func afterFinishTheParserStartsANewStream() throws {
        var parser = ServerSentEventParser()
        let stream = "retry: 2000\nid: 5\ndata: a\n\nevent: e\nid: 6\ndata: pending\n"
        #expect(try parser.parse(Data(stream.utf8)) == [ServerSentEvent(id: "5", data: "a", retry: 2000)])
        #expect(parser.finish().isEmpty)
        // What the event source keeps for a reconnection.
        #expect(parser.lastEventID == "5")
        #expect(parser.reconnectionTime == 2000)
        // The new stream: a byte order mark ignored again, nothing left of the discarded event, and an ID
        // buffer that starts empty, as the spec says of every stream.
        #expect(try parser.parse(Data("\u{FEFF}data: b\n\n".utf8)) == [ServerSentEvent(id: nil, data: "b")])
        #expect(parser.lastEventID == nil)
        #expect(parser.reconnectionTime == 2000)
    }

    @Test func aCREndingOneStreamDoesNotSwallowAnLFStartingTheNext() throws {
        var parser = ServerSentEventParser()
        _ = try parser.parse(Data("id: 5\ndata: a\n\ndata: pending\r".utf8))
        _ = parser.finish()
        #expect(parser.lastEventID == "5")
        // A blank line of the new stream, whose dispatch takes the new, empty, ID buffer.
        #expect(try parser.parse(Data("\n".utf8)).isEmpty)
        #expect(parser.lastEventID == nil)
    }

    // MARK: - The size limit

    @Test func anEndlessLineThrowsOnceItPassesTheLimit() throws {
        var parser = ServerSentEventParser(maximumEventSize: 8)
        #expect(parser.maximumEventSize == 8)
        #expect(try parser.parse(Data("data: ab".utf8)).isEmpty)  // 8 bytes: at the limit
        #expect(throws: ServerSentEventParser.EventTooLarge(maximumEventSize: 8)) { try parser.parse(Data("c".utf8)) }
        // Everything is dropped until the stream ends, even complete events.
        #expect(throws: ServerSentEventParser.EventTooLarge(maximumEventSize: 8)) { try parser.parse(Data("\n\ndata: x\n\n".utf8)) }
        // finish() starts a new stream, within the limit again.
        _ = parser.finish()
        #expect(try parser.parse(Data("data: x\n\n".utf8)) == [ServerSentEvent(data: "x")])
    }

    @Test func aLongLineInOneChunkThrows() {
        var parser = ServerSentEventParser(maximumEventSize: 8)
        #expect(throws: ServerSentEventParser.EventTooLarge.self) { try parser.parse(Data("data: abc\n\n".utf8)) }
    }

    @Test func dataGatheredAcrossLinesCountsTowardTheLimit() throws {
        var parser = ServerSentEventParser(maximumEventSize: 10)
        // Each line (9 bytes) fits; the event's data ("abcd\nefgh\nijkl\n", 15 bytes) does not.
        #expect(throws: ServerSentEventParser.EventTooLarge.self) {
            try parser.parse(Data("data:abcd\ndata:efgh\ndata:ijkl\n".utf8))
        }
        _ = parser.finish()
        // Dispatching empties the data: many small events pass.
        let events = try parser.parse(Data(String(repeating: "data:abcd\n\n", count: 100).utf8))
        #expect(events.count == 100)
    }

    @Test func theDefaultLimitIsFourMebibytes() {
        #expect(ServerSentEventParser().maximumEventSize == 4 * 1024 * 1024)
        #expect(ServerSentEventParser.defaultMaximumEventSize == 4 * 1024 * 1024)
        // A limit no stream could meet is raised to the smallest, rather than trapping.
        #expect(ServerSentEventParser(maximumEventSize: -3).maximumEventSize == 1)
    }
}
