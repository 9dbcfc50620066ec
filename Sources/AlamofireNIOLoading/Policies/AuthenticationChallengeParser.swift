/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): a scheme and its parameters.
package struct AuthenticationChallengeOffer: Equatable, Sendable {
    /// The scheme, lowercased (`basic`, `digest`, …).
    package var scheme: String
    /// The parameters by lowercased name, quoted strings unquoted.
    package var parameters: [String: String]
    /// A `token68` instead of parameters (`Negotiate abc==`), if any.
    package var token: String?

    package init(scheme: String, parameters: [String: String] = [:], token: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token = token
    }

    /// Every challenge of the given header values, in order. A header may hold several challenges
    /// separated by commas, as may several headers; what cannot be parsed is skipped, never a crash.
    package static func parse(_ headers: [String]) -> [AuthenticationChallengeOffer] {
        headers.flatMap { header -> [AuthenticationChallengeOffer] in
            var scanner = HeaderScanner(Array(header.utf8))
            return scanner.challenges()
        }
    }
}

/// Reads challenges from a header's bytes: each begins with a scheme token followed by a space; a
/// token followed by `=` is a parameter of the current challenge.
private struct HeaderScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func challenges() -> [AuthenticationChallengeOffer] {
        var result: [AuthenticationChallengeOffer] = []
        var current: AuthenticationChallengeOffer?
        while true {
            skip { $0 == .space || $0 == .tab || $0 == .comma }
            guard index < bytes.count else { break }
            guard let name = token() else {
                // Not a token: skip it and try again after it.
                skip { $0 != .comma && $0 != .space && $0 != .tab }
                continue
            }
            let afterName = index
            skip { $0 == .space || $0 == .tab }
            if index < bytes.count, bytes[index] == .equals {
                // A parameter (one before any scheme, or a malformed value, is dropped).
                if let value = parameterValue(), current != nil { current?.parameters[name.lowercased()] = value }
                continue
            }
            // A scheme: the challenge before it is complete.
            if let current { result.append(current) }
            current = AuthenticationChallengeOffer(scheme: name.lowercased())
            index = afterName
            skip { $0 == .space || $0 == .tab }
            if let token = token68() { current?.token = token }
        }
        if let current { result.append(current) }
        return result
    }

    /// `= value` after a parameter name: a token or a quoted string; nil (the rest of the item
    /// skipped) when malformed.
    private mutating func parameterValue() -> String? {
        index += 1  // "="
        skip { $0 == .space || $0 == .tab }
        guard index < bytes.count else { return nil }
        if bytes[index] == .quote {
            index += 1
            var value: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == .quote { return String(decoding: value, as: UTF8.self) }
                if byte == .backslash, index < bytes.count {
                    value.append(bytes[index])
                    index += 1
                } else {
                    value.append(byte)
                }
            }
            return nil  // an unterminated quote
        }
        if let value = token() { return value }
        skip { $0 != .comma }
        return nil
    }

    /// A `token68` right after a scheme (`abc==`), only when nothing but the end or a comma follows
    /// (so `realm=x` stays a parameter).
    private mutating func token68() -> String? {
        let start = index
        while index < bytes.count, Self.isToken68(bytes[index]) { index += 1 }
        while index < bytes.count, bytes[index] == .equals { index += 1 }
        let end = index
        skip { $0 == .space || $0 == .tab }
        guard end > start, index == bytes.count || bytes[index] == .comma else {
            index = start
            return nil
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private mutating func token() -> String? {
        let start = index
        while index < bytes.count, Self.isTokenCharacter(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    private mutating func skip(while condition: (UInt8) -> Bool) {
        while index < bytes.count, condition(bytes[index]) { index += 1 }
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func isToken68(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("-._~+/".utf8).contains(byte)
        }
    }
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
}
