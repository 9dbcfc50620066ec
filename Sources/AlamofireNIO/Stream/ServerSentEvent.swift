public import Foundation

/// One event of a `text/event-stream` body (Server-Sent Events), as an `EventSource` would fire it.
///
/// ```swift
/// // id: 7
/// // event: update
/// // data: {"n":1}
/// // <blank line>
/// ServerSentEvent(id: "7", event: "update", data: #"{"n":1}"#)
/// ```
public struct ServerSentEvent: Sendable, Equatable {
    /// The stream's last event ID when the event was dispatched: set by the most recent `id` field, in this event or
    /// an earlier one. `nil` while that ID is the empty string, which the spec treats as no ID.
    public var id: String?
    /// The event type: the value of the event's `event` field, or `"message"` when it had none (or an empty one).
    public var event: String
    /// The values of the event's `data` fields, joined with `"\n"`.
    public var data: String
    /// The reconnection time, in milliseconds, given by a valid `retry` field in this event; `nil` when it had none.
    /// ``ServerSentEventParser/reconnectionTime`` keeps the latest value across events.
    public var retry: Int?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - id:    The last event ID. `nil` by default.
    ///   - event: The event type. `"message"` by default.
    ///   - data:  The event data.
    ///   - retry: The reconnection time in milliseconds given with the event. `nil` by default.
    public init(id: String? = nil, event: String = "message", data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }
}

/// Turns the bytes of a `text/event-stream` body into ``ServerSentEvent`` values, following the WHATWG HTML
/// standard's "event stream interpretation".
///
/// Feed the body as it arrives, in chunks split anywhere (inside a line, a UTF-8 character or a CRLF pair); each
/// call returns the events its bytes completed. Call ``finish()`` at the end of the body.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// var events = parser.parse(Data("id: 1\nevent: update\nda".utf8))  // []
/// events += parser.parse(Data("ta: first\ndata: second\n\n".utf8))
/// // [ServerSentEvent(id: "1", event: "update", data: "first\nsecond")]
/// events += parser.parse(Data("data: no blank line yet\n".utf8))  // []
/// events += parser.finish()  // []: an event without its blank line is discarded
/// parser.lastEventID  // "1", for a reconnection's Last-Event-ID header
/// ```
///
/// The rules, briefly: the body is UTF-8 (invalid bytes become U+FFFD) with one leading byte order mark ignored;
/// lines end with CRLF, LF or CR; a blank line dispatches the event gathered so far; a line starting with `:` is a
/// comment; `field: value` loses one space after the colon, and a line without a colon is a field with an empty value.
/// `data` appends its value and a line feed, `event` sets the type, `id` sets the last event ID (unless the value
/// contains NUL), `retry` sets the reconnection time (only when the value is all ASCII digits); other fields are
/// ignored. A dispatch with no data fires nothing, and the end of the body discards an event not yet dispatched.
///
/// Memory is bounded: a line not yet ended (its field name included), or the data of an event not yet dispatched (its
/// lines joined with line feeds, as decoded: an invalid byte counts as the three of U+FFFD), may hold at most
/// ``maximumEventSize`` bytes (``defaultMaximumEventSize``, 4 MiB, unless given). A stream that goes past it makes
/// ``parse(_:)`` throw ``EventTooLarge``; the parser then drops everything until ``finish()``. The standard sets no
/// limit, but a server sending one endless line would otherwise grow the client's memory without end.
public struct ServerSentEventParser: Sendable {
    /// Thrown by ``parse(_:)`` when a line or an event's data grows past ``maximumEventSize``.
    public struct EventTooLarge: Error, Sendable, Equatable, CustomStringConvertible {
        /// The limit that was passed, in bytes.
        public let maximumEventSize: Int

        /// A sentence naming the limit.
        public var description: String {
            "a Server-Sent Events line or event grew past \(maximumEventSize) bytes"
        }
    }

    /// The limit a parser has unless it is given another: 4 MiB.
    public static let defaultMaximumEventSize = 4 * 1024 * 1024

    /// The most bytes a line not yet ended, or the data of an event not yet dispatched, may hold.
    public let maximumEventSize: Int

    /// The last event ID, as the event source keeps it: taken from the latest `id` field each time a blank line
    /// dispatches (even when no event fires), so it persists across events until an `id` field changes it. `nil`
    /// while it is the empty string, when a reconnection sends no `Last-Event-ID` header.
    public private(set) var lastEventID: String?
    /// The reconnection time in milliseconds from the latest valid `retry` field, `nil` until one arrives.
    public private(set) var reconnectionTime: Int?

    /// Bytes of the line not yet ended.
    private var lineBuffer: [UInt8] = []
    /// Whether the last byte seen ended a line with CR, so that an LF right after it is the rest of a CRLF pair,
    /// even when it arrives in the next chunk.
    private var lineEndedWithCR = false
    /// Whether no line has been read yet: the first one may start with the byte order mark.
    private var atStreamStart = true
    private var dataBuffer = ""
    private var eventTypeBuffer = ""
    private var lastEventIDBuffer = ""
    /// The value of a valid `retry` field since the last dispatch, reported with the next event.
    private var retryInEvent: Int?
    /// Whether the stream went past the limit: everything is dropped until ``finish()``.
    private var isOverLimit = false

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Creates a parser for one stream.
    ///
    /// - Parameter maximumEventSize: The most bytes a line not yet ended, or an event's data, may hold.
    ///                               ``defaultMaximumEventSize`` (4 MiB) by default; a value below 1 counts as 1.
    public init(maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize) {
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// Reads the next bytes of the stream.
    ///
    /// - Parameter bytes: The next chunk of the body, split anywhere.
    /// - Returns:         The events dispatched by the lines this chunk completed, in order.
    /// - Throws:          ``EventTooLarge`` when a line or an event's data grows past ``maximumEventSize``, and for every
    ///                    chunk after that until ``finish()``. Events the chunk completed before are lost with it.
    public mutating func parse(_ bytes: Data) throws(EventTooLarge) -> [ServerSentEvent] {
        guard !isOverLimit else { throw EventTooLarge(maximumEventSize: maximumEventSize) }
        var events: [ServerSentEvent] = []
        let withinLimit = bytes.withUnsafeBytes { (chunk: UnsafeRawBufferPointer) -> Bool in
            var lineStart = 0
            for index in chunk.indices where chunk[index] == Self.lineFeed || chunk[index] == Self.carriageReturn {
                if chunk[index] == Self.lineFeed, lineEndedWithCR, index == lineStart {
                    // The LF of a CRLF pair whose CR already ended the line.
                    lineEndedWithCR = false
                    lineStart = index + 1
                    continue
                }
                guard lineBuffer.count + (index - lineStart) <= maximumEventSize else { return false }
                lineBuffer.append(contentsOf: chunk[lineStart..<index])
                processLine(into: &events)
                lineBuffer.removeAll(keepingCapacity: true)
                guard dataBuffer.utf8.count <= maximumEventSize else { return false }
                lineEndedWithCR = chunk[index] == Self.carriageReturn
                lineStart = index + 1
            }
            if lineStart < chunk.count {
                guard lineBuffer.count + (chunk.count - lineStart) <= maximumEventSize else { return false }
                lineBuffer.append(contentsOf: chunk[lineStart...])
                lineEndedWithCR = false
            }
            return true
        }
        guard withinLimit else {
            reset()
            isOverLimit = true
            throw EventTooLarge(maximumEventSize: maximumEventSize)
        }
        return events
    }

    /// Ends the stream. An event not yet dispatched by a blank line is discarded, as the spec requires, so this
    /// returns no events; it is here so a stream's end is stated, and it readies the parser for a new stream (a
    /// reconnection): ``lastEventID`` and ``reconnectionTime`` stay, while the buffers start empty, the ID buffer
    /// too, as the spec has it for every stream, so the new stream's first dispatch sets ``lastEventID`` afresh.
    ///
    /// - Returns: The events the end of the stream dispatches: always none.
    public mutating func finish() -> [ServerSentEvent] {
        reset()
        isOverLimit = false
        return []
    }

    /// Empties the buffers, as at the start of a stream.
    private mutating func reset() {
        lineBuffer = []
        lineEndedWithCR = false
        atStreamStart = true
        dataBuffer = ""
        eventTypeBuffer = ""
        lastEventIDBuffer = ""
        retryInEvent = nil
    }

    /// Interprets the complete line in `lineBuffer`.
    private mutating func processLine(into events: inout [ServerSentEvent]) {
        var line = lineBuffer[...]
        if atStreamStart {
            atStreamStart = false
            if line.starts(with: Self.byteOrderMark) { line = line.dropFirst(Self.byteOrderMark.count) }
        }
        guard let first = line.first else {
            dispatch(into: &events)
            return
        }
        guard first != Self.colon else { return }  // A comment.

        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colonIndex = line.firstIndex(of: Self.colon) {
            field = line[..<colonIndex]
            value = line[line.index(after: colonIndex)...]
            if value.first == Self.space { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }

        // Field names are compared byte for byte: they are case-sensitive ASCII.
        if field.elementsEqual("data".utf8) {
            dataBuffer += String(decoding: value, as: UTF8.self)
            dataBuffer += "\n"
        } else if field.elementsEqual("event".utf8) {
            eventTypeBuffer = String(decoding: value, as: UTF8.self)
        } else if field.elementsEqual("id".utf8) {
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        } else if field.elementsEqual("retry".utf8) {
            // All ASCII digits; a value too large for Int is ignored as well.
            if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let milliseconds = Int(String(decoding: value, as: UTF8.self))
            {
                reconnectionTime = milliseconds
                retryInEvent = milliseconds
            }
        }
    }

    /// The spec's "dispatch the event", on a blank line.
    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        lastEventID = lastEventIDBuffer.isEmpty ? nil : lastEventIDBuffer
        let retry = retryInEvent
        retryInEvent = nil
        defer {
            dataBuffer = ""
            eventTypeBuffer = ""
        }
        guard !dataBuffer.isEmpty else { return }
        var data = dataBuffer
        if data.unicodeScalars.last == "\n" { data.unicodeScalars.removeLast() }
        events.append(
            ServerSentEvent(id: lastEventID, event: eventTypeBuffer.isEmpty ? "message" : eventTypeBuffer, data: data, retry: retry))
    }
}
