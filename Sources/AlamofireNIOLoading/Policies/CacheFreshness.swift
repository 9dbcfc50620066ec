package import Foundation

/// A `Cache-Control` header's directives (RFC 9111 §5.2), by lowercased name; a directive without
/// an argument has an empty one.
package struct CacheControl: Equatable, Sendable {
    package var directives: [String: String]

    package init(_ header: String?) {
        var directives: [String: String] = [:]
        for part in Self.split(header ?? "") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pair.first?.lowercased(), !name.isEmpty else { continue }
            let argument = pair.count > 1 ? Self.unquoted(pair[1]) : ""
            // The first occurrence wins, as RFC 9111 advises for duplicates.
            if directives[name] == nil { directives[name] = argument }
        }
        self.directives = directives
    }

    /// The header's directives: split at each comma outside a quoted string (RFC 9110 §5.6.4), so
    /// `no-cache="Set-Cookie, Vary"` stays one directive. A header whose quote is never closed is
    /// malformed: it is split at every comma instead, so a directive after the stray quote (`no-store`,
    /// say) is not lost.
    static func split(_ header: String) -> [Substring] {
        var parts: [Substring] = []
        var start = header.startIndex
        var index = header.startIndex
        var inQuotes = false
        while index < header.endIndex {
            switch header[index] {
            case "\\" where inQuotes:
                // A quoted pair: the next character is taken as it is.
                index = header.index(after: index)
                if index == header.endIndex { continue }
            case "\"":
                inQuotes.toggle()
            case "," where !inQuotes:
                parts.append(header[start..<index])
                start = header.index(after: index)
            default:
                break
            }
            index = header.index(after: index)
        }
        guard !inQuotes else { return header.split(separator: ",", omittingEmptySubsequences: false) }
        parts.append(header[start...])
        return parts
    }

    /// An argument without its quotes and quoted pairs' backslashes; a token as it is.
    static func unquoted(_ argument: String) -> String {
        guard argument.hasPrefix("\""), argument.count >= 2 else { return argument }
        var result = ""
        var escaped = false
        for character in argument.dropFirst() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                break
            } else {
                result.append(character)
            }
        }
        return result
    }

    package func has(_ directive: String) -> Bool { directives[directive] != nil }

    /// A directive's argument as seconds (`max-age=60`); nil when absent or not a number.
    package func seconds(_ directive: String) -> TimeInterval? {
        directives[directive].flatMap { TimeInterval($0) }.map { max(0, $0) }
    }
}

/// RFC 9111 §4.2's freshness arithmetic for one stored response, as a value: how long it stays
/// fresh and how old it is at a moment.
package struct CacheFreshness: Equatable, Sendable {
    /// How long the response is fresh for, from its headers (seconds).
    package var lifetime: TimeInterval
    /// The response's age when it was received (seconds).
    package var initialAge: TimeInterval
    /// When it was received.
    package var responseTime: Date

    /// Status codes a cache may give heuristic freshness (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// - Parameters:
    ///   - headers: the response's header fields (any case).
    ///   - statusCode: its status.
    ///   - requestTime, responseTime: when the request was sent and the response received.
    package init(headers: [String: String], statusCode: Int, requestTime: Date, responseTime: Date) {
        let fields = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let control = CacheControl(fields["cache-control"])
        let date = fields["date"].flatMap(CookieDate.parse)
        // A private cache ignores s-maxage (§5.2.2.10).
        if let maxAge = control.seconds("max-age") {
            lifetime = maxAge
        } else if let expiresText = fields["expires"] {
            // An invalid Expires (often "0") means already expired.
            let expires = CookieDate.parse(expiresText) ?? .distantPast
            lifetime = max(0, expires.timeIntervalSince(date ?? responseTime))
        } else if let lastModified = fields["last-modified"].flatMap(CookieDate.parse), Self.heuristicallyCacheable.contains(statusCode) {
            // The usual heuristic: a tenth of the time since the last change (§4.2.2).
            lifetime = max(0, (date ?? responseTime).timeIntervalSince(lastModified) / 10)
        } else {
            lifetime = 0
        }
        let apparentAge = max(0, responseTime.timeIntervalSince(date ?? responseTime))
        let ageValue = fields["age"].flatMap { TimeInterval($0) } ?? 0
        let correctedAge = ageValue + max(0, responseTime.timeIntervalSince(requestTime))
        initialAge = max(apparentAge, correctedAge)
        self.responseTime = responseTime
    }

    /// The response's age at `now` (§4.2.3).
    package func age(at now: Date) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// Whether it is fresh at `now`.
    package func isFresh(at now: Date) -> Bool {
        lifetime > age(at: now)
    }
}
