public import Foundation

/// One of HTTPie's request items, as `af` reads them after the URL:
///
/// | item | meaning |
/// | --- | --- |
/// | `Name:value` | a header; `Name:` removes a header `af` would send, `Name;` sends it empty |
/// | `name==value` | a query parameter |
/// | `field=text` | a body field, a JSON string (or a form field with `--form`) |
/// | `field:=json` | a body field holding raw JSON (`count:=3`, `tags:='["a"]'`) |
/// | `field@path` | a file, sent as a multipart part |
/// | `field=@path`, `field:=@path` | a field whose text, or JSON, is read from a file |
///
/// The earliest separator in the item wins, the longest at that position; a backslash before a
/// separator character makes it literal (`a\=b=c` is the field `a=b` with the value `c`).
public enum RequestItem: Equatable, Sendable {
    /// A header to send; a nil value removes it.
    case header(name: String, value: String?)
    /// A query parameter.
    case query(name: String, value: String)
    /// A body field with a string value.
    case field(name: String, value: String)
    /// A body field with a raw JSON value.
    case jsonField(name: String, value: JSONValue)
    /// A file to upload as a multipart part.
    case file(name: String, path: String)

    /// Why an item could not be read.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        /// What was wrong, for people.
        public let description: String
    }

    /// The separators, longest first so that at one position the longest wins.
    private static let separators = [":=@", "=@", "==", ":=", "@", "=", ":", ";"]

    /// Whether `argument` has a separator, so it is an item rather than a URL or a method.
    public static func looksLikeItem(_ argument: String) -> Bool {
        (try? split(argument)) != nil
    }

    /// Reads an item; files named by `=@` and `:=@` are read through `readFile`.
    public init(parsing argument: String, readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) }) throws {
        let (name, separator, value) = try Self.split(argument)
        func fileText(_ path: String) throws -> String {
            let data: Data
            do { data = try readFile(path) } catch {
                throw ParseError(description: "\"\(argument)\": cannot read \(path): \(error.localizedDescription)")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw ParseError(description: "\"\(argument)\": \(path) is not UTF-8 text")
            }
            return text
        }
        func json(_ text: String) throws -> JSONValue {
            do { return try JSONValue(parsing: Data(text.utf8)) } catch {
                throw ParseError(description: "\"\(argument)\": not JSON: \(error)")
            }
        }
        switch separator {
        case ":": self = .header(name: name, value: value.isEmpty ? nil : value)
        case ";": self = .header(name: name, value: "")
        case "==": self = .query(name: name, value: value)
        case "=": self = .field(name: name, value: value)
        case ":=": self = .jsonField(name: name, value: try json(value))
        case "=@": self = .field(name: name, value: try fileText(value))
        case ":=@": self = .jsonField(name: name, value: try json(try fileText(value)))
        default: self = .file(name: name, path: value)
        }
    }

    /// The item's name, separator and value, with escapes removed.
    private static func split(_ argument: String) throws -> (name: String, separator: String, value: String) {
        var name = ""
        var index = argument.startIndex
        while index < argument.endIndex {
            let character = argument[index]
            let next = argument.index(after: index)
            if character == "\\", next < argument.endIndex, separatorCharacters.contains(argument[next]) {
                name.append(argument[next])
                index = argument.index(after: next)
                continue
            }
            if let separator = separators.first(where: { argument[index...].hasPrefix($0) }) {
                guard !name.isEmpty else {
                    throw ParseError(description: "\"\(argument)\": an item needs a name before \"\(separator)\"")
                }
                let value = argument[argument.index(index, offsetBy: separator.count)...]
                return (name, separator, unescaped(value))
            }
            name.append(character)
            index = argument.index(after: index)
        }
        throw ParseError(
            description: "\"\(argument)\" is not a request item (Header:value, name==query, field=value, field:=json, field@file)")
    }

    /// The characters separators are made of: a backslash before one of them makes it literal.
    private static let separatorCharacters: Set<Character> = [":", "=", "@", ";"]

    /// `text` with the backslashes before separator characters removed; other backslashes stay
    /// (so a JSON value's `\n` is untouched).
    private static func unescaped(_ text: Substring) -> String {
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == "\\", next < text.endIndex, separatorCharacters.contains(text[next]) {
                result.append(text[next])
                index = text.index(after: next)
            } else {
                result.append(text[index])
                index = next
            }
        }
        return result
    }
}
