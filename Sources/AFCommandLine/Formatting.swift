/// Whether output is coloured with ANSI escape codes (on a terminal) or plain (when piped).
public enum OutputStyle: Sendable, Equatable {
    case plain
    case colored

    /// The ANSI colours `af` uses.
    enum Color: String {
        case key = "34"
        case string = "33"
        case number = "36"
        case literal = "35"
        case success = "32"
        case redirect = "33;1"
        case failure = "31;1"
        case headerName = "36;1"
        case protocolName = "34;1"
    }

    /// `text` in `color`, or plain.
    func paint(_ text: String, _ color: Color) -> String {
        self == .colored ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }
}

/// Writes a ``JSONValue`` as JSON text: compact, or indented as HTTPie prints it (four spaces, keys
/// in the server's order), coloured or plain.
struct JSONWriter {
    /// Spaces per level; nil for compact output.
    let indent: Int?
    let style: OutputStyle

    func write(_ value: JSONValue, into output: inout String, depth: Int) {
        switch value {
        case .null: output += style.paint("null", .literal)
        case .bool(let flag): output += style.paint(flag ? "true" : "false", .literal)
        case .number(let text): output += style.paint(text, .number)
        case .string(let text): output += style.paint(Self.quoted(text), .string)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, into: &output, depth: depth) { index, output in
                write(elements[index], into: &output, depth: depth + 1)
            }
        case .object(let members):
            writeContainer(open: "{", close: "}", count: members.count, into: &output, depth: depth) { index, output in
                output += style.paint(Self.quoted(members[index].key), .key)
                output += indent == nil ? ":" : ": "
                write(members[index].value, into: &output, depth: depth + 1)
            }
        }
    }

    private func writeContainer(
        open: String, close: String, count: Int, into output: inout String, depth: Int, element: (Int, inout String) -> Void
    ) {
        output += open
        guard count > 0 else {
            output += close
            return
        }
        for index in 0..<count {
            if index > 0 { output += "," }
            if let indent { output += "\n" + String(repeating: " ", count: indent * (depth + 1)) }
            element(index, &output)
        }
        if let indent { output += "\n" + String(repeating: " ", count: indent * depth) }
        output += close
    }

    /// `text` as a JSON string literal; characters beyond ASCII stay as they are.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension JSONValue {
    /// The value indented by four spaces per level, as `af` prints JSON bodies.
    public func prettyPrinted(style: OutputStyle = .plain) -> String {
        var output = ""
        JSONWriter(indent: 4, style: style).write(self, into: &output, depth: 0)
        return output
    }
}
