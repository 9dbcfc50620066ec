package import Foundation

/// One `Set-Cookie` header parsed by RFC 6265 §5.2, before the storage model applies it.
///
/// FoundationNetworking's own parser (`HTTPCookie.cookies(withResponseHeaderFields:for:)`) ignores
/// `Max-Age` and keeps a cookie whose date has passed, and its `HTTPCookie` has no `SameSite`, so
/// the loading layer parses headers itself and builds `HTTPCookie`s from the result.
package struct SetCookie: Equatable, Sendable {
    package var name: String
    package var value: String
    /// The `Domain` attribute, lowercased and without a leading dot; nil makes a host-only cookie.
    package var domain: String?
    /// The `Path` attribute when it is a path (starts with `/`).
    package var path: String?
    /// From `Max-Age` (which wins) or `Expires`; nil for a session cookie.
    package var expires: Date?
    package var isSecure = false
    package var isHTTPOnly = false
    /// `Strict`, `Lax` or `None` as sent (FoundationNetworking's `HTTPCookie` cannot keep it).
    package var sameSite: String?

    /// Parses one header value; nil when it sets no cookie (no `=` in its first part, or an empty
    /// name). `now` is when the response arrived, for `Max-Age`.
    package init?(_ header: String, now: Date) {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        name = Self.trimmed(pair[..<equals])
        value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty else { return nil }
        var maxAge: Date?
        for part in parts {
            let attribute = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = Self.trimmed(attribute[0]).lowercased()
            let argument = attribute.count > 1 ? Self.trimmed(attribute[1]) : ""
            switch key {
            case "expires":
                if let date = CookieDate.parse(argument) { expires = date }
            case "max-age":
                if let seconds = Self.deltaSeconds(argument) {
                    maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(seconds))
                }
            case "domain":
                guard !argument.isEmpty else { continue }
                domain = String(argument.drop { $0 == "." }).lowercased()
            case "path":
                path = argument.hasPrefix("/") ? argument : nil
            case "secure":
                isSecure = true
            case "httponly":
                isHTTPOnly = true
            case "samesite":
                sameSite = argument.isEmpty ? nil : argument
            default:
                continue
            }
        }
        if let maxAge { expires = maxAge }
    }

    /// RFC 6265's default path: the request path up to, not including, its last `/`, or `/`.
    package static func defaultPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// `Max-Age`'s value: an optional `-` and digits; anything else ignores the attribute.
    private static func deltaSeconds(_ text: String) -> Int64? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        // A value too large for Int64 is as good as forever.
        return Int64(text) ?? (text.hasPrefix("-") ? -1 : Int64(Int32.max))
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// RFC 6265 §5.1.1's cookie-date algorithm: tolerant of every date format servers send
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`).
package enum CookieDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date, or nil when the text has no valid time, day, month and year.
    package static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in text.split(whereSeparator: isDelimiter) {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let parsed = leadingNumber(token, digits: 1...2) {
                day = parsed
            } else if month == nil, token.count >= 3, let index = months.firstIndex(of: token.prefix(3).lowercased()) {
                month = index + 1
            } else if year == nil, let parsed = leadingNumber(token, digits: 2...4) {
                year = parsed
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: time.hour, minute: time.minute, second: time.second)
        // A day the month does not have (31 Feb) is invalid, not rolled over.
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    /// RFC 6265's delimiters: every character but digits, letters, `:` and a few controls.
    private static func isDelimiter(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1, scalar.isASCII else { return false }
        switch scalar.value {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
        default: return false
        }
    }

    /// `h[h]:m[m]:s[s]`, optionally followed by non-digits.
    private static func parseTime(_ token: Substring) -> (hour: Int, minute: Int, second: Int)? {
        let fields = token.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, let hour = wholeNumber(fields[0], digits: 1...2), let minute = wholeNumber(fields[1], digits: 1...2),
            let second = leadingNumber(fields[2], digits: 1...2)
        else { return nil }
        return (hour, minute, second)
    }

    private static func wholeNumber(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.count), text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }

    /// A number of `digits` digits at the start of `text`, followed by anything but a digit.
    private static func leadingNumber(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        let number = text.prefix(while: \.isASCIIDigit)
        guard digits.contains(number.count) else { return nil }
        return Int(number)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
