public import Foundation

/// A JSON value that keeps what Foundation's `JSONSerialization` loses: the order of an object's
/// keys, and each number exactly as written. `af` builds request bodies with it and prints
/// responses from it.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number, as its JSON text.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// An object's members, in order.
    case object([(key: String, value: JSONValue)])

    /// Why bytes are not JSON: what was expected, and where.
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        /// What was wrong.
        public let message: String
        /// The byte offset where it was found.
        public let offset: Int

        /// `message at byte N`.
        public var description: String { "\(message) at byte \(offset)" }
    }

    /// The deepest nesting the parser follows, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    /// Parses one JSON value (with white space around it, and nothing else).
    public init(parsing data: Data) throws(SyntaxError) {
        var parser = Parser(bytes: Array(data))
        self = try parser.document()
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The value as compact JSON text, keys in order.
    public var serialized: String {
        var output = ""
        JSONWriter(indent: nil, style: .plain).write(self, into: &output, depth: 0)
        return output
    }

    /// A recursive-descent parser over UTF-8 bytes.
    private struct Parser {
        let bytes: [UInt8]
        var offset = 0

        mutating func document() throws(SyntaxError) -> JSONValue {
            let value = try parseValue(depth: 0)
            skipSpace()
            guard offset == bytes.count else { throw SyntaxError(message: "unexpected text after the value", offset: offset) }
            return value
        }

        private mutating func skipSpace() {
            while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
        }

        private mutating func expect(_ literal: String) throws(SyntaxError) {
            let expected = Array(literal.utf8)
            guard bytes.count - offset >= expected.count, Array(bytes[offset..<offset + expected.count]) == expected else {
                throw SyntaxError(message: "expected \(literal)", offset: offset)
            }
            offset += expected.count
        }

        private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw SyntaxError(message: "nested too deeply", offset: offset) }
            skipSpace()
            guard offset < bytes.count else { throw SyntaxError(message: "unexpected end", offset: offset) }
            switch bytes[offset] {
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "["):
                offset += 1
                var elements: [JSONValue] = []
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                    offset += 1
                    return .array(elements)
                }
                while true {
                    elements.append(try parseValue(depth: depth + 1))
                    skipSpace()
                    if try closes(UInt8(ascii: "]")) { return .array(elements) }
                }
            case UInt8(ascii: "{"):
                offset += 1
                var members: [(key: String, value: JSONValue)] = []
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                    offset += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
                        throw SyntaxError(message: "expected a key", offset: offset)
                    }
                    let key = try parseString()
                    skipSpace()
                    try expect(":")
                    members.append((key, try parseValue(depth: depth + 1)))
                    skipSpace()
                    if try closes(UInt8(ascii: "}")) { return .object(members) }
                }
            default: return .number(try parseNumber())
            }
        }

        /// After an element: true at the closing bracket, false at a comma, else an error.
        private mutating func closes(_ bracket: UInt8) throws(SyntaxError) -> Bool {
            guard offset < bytes.count else { throw SyntaxError(message: "unexpected end", offset: offset) }
            let byte = bytes[offset]
            offset += 1
            if byte == bracket { return true }
            if byte == UInt8(ascii: ",") { return false }
            throw SyntaxError(message: "expected , or \(Character(UnicodeScalar(bracket)))", offset: offset - 1)
        }

        private mutating func parseNumber() throws(SyntaxError) -> String {
            let start = offset
            func digits() -> Int {
                let first = offset
                while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
                return offset - first
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let integerStart = offset
            guard digits() > 0 else { throw SyntaxError(message: "expected a value", offset: start) }
            if bytes[integerStart] == UInt8(ascii: "0"), offset - integerStart > 1 {
                throw SyntaxError(message: "a number with a leading zero", offset: start)
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard digits() > 0 else { throw SyntaxError(message: "expected digits after .", offset: offset) }
            }
            if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                guard digits() > 0 else { throw SyntaxError(message: "expected an exponent", offset: offset) }
            }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        private mutating func parseString() throws(SyntaxError) -> String {
            let start = offset
            offset += 1
            var scalars = String.UnicodeScalarView()
            var run = offset
            func flush(upTo end: Int) throws(SyntaxError) {
                guard let text = String(validating: bytes[run..<end], as: UTF8.self) else {
                    throw SyntaxError(message: "a string that is not UTF-8", offset: run)
                }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    try flush(upTo: offset)
                    offset += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw SyntaxError(message: "a control character in a string", offset: offset) }
                if byte != UInt8(ascii: "\\") {
                    offset += 1
                    continue
                }
                try flush(upTo: offset)
                offset += 1
                guard offset < bytes.count else { break }
                let escaped = bytes[offset]
                offset += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(UnicodeScalar(escaped))
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hexQuad()
                    if (0xD800..<0xDC00).contains(code), bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"),
                        bytes[offset + 1] == UInt8(ascii: "u")
                    {
                        offset += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else { throw SyntaxError(message: "a broken surrogate pair", offset: offset) }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(UnicodeScalar(code) ?? "\u{FFFD}")
                default: throw SyntaxError(message: "an unknown escape", offset: offset - 1)
                }
                run = offset
            }
            throw SyntaxError(message: "an unterminated string", offset: start)
        }

        private mutating func hexQuad() throws(SyntaxError) -> UInt32 {
            guard bytes.count - offset >= 4, let code = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
            else { throw SyntaxError(message: "expected four hex digits", offset: offset) }
            offset += 4
            return code
        }
    }
}
