import Foundation

/// Decoding of `application/x-www-form-urlencoded` text, used for queries and form bodies.
enum FormDecoding {
    /// Splits `a=1&b=x+y` into pairs, turning `+` into a space and undoing percent-encoding.
    /// A pair without `=` has an empty value; empty pieces are skipped.
    static func pairs(_ encoded: String) -> [(name: String, value: String)] {
        encoded.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            return (name, value)
        }
    }

    private static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
