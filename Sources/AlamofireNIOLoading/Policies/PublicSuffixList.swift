/// The Public Suffix List (https://publicsuffix.org), ICANN and private sections: names under
/// which anyone may register, such as `com`, `co.uk` or `github.io`.
///
/// RFC 6265 §5.3 step 5: a cookie's `Domain` attribute must not be a public suffix, or a site
/// could set cookies for every site under `co.uk`. The rules are generated from Debian's
/// `publicsuffix` package by `Scripts/generate-public-suffixes.py` and parsed once, on first use.
package enum PublicSuffixList {
    /// Whether `domain` as a whole is a public suffix, by the list's formal algorithm
    /// (https://github.com/publicsuffix/list/wiki/Format#formal-algorithm): exact rules, wildcard
    /// rules (`*.ck`), exception rules (`!www.ck`) and the default rule `*`, so every single-label
    /// name (`com`, `localhost`) is one.
    ///
    /// Case-insensitive; one leading and one trailing dot are ignored. An empty name or one with
    /// an empty label (`a..b`) counts as a public suffix, so that it is refused. IDNs match in
    /// Unicode and in punycode form. IP addresses are the caller's business.
    package static func isPublicSuffix(_ domain: String) -> Bool {
        let dot = UInt8(ascii: ".")
        var name = Substring(domain.lowercased())
        if name.utf8.first == dot { name = name[name.utf8.index(after: name.startIndex)...] }
        if name.utf8.last == dot { name = name[..<name.utf8.index(before: name.endIndex)] }
        let rules = Self.rules
        // One pass over the UTF-8 bytes (`split` on Characters segments graphemes, far slower),
        // trying each suffix: an exception rule matching any of them prevails over every other
        // rule and makes the public suffix shorter than the rule, hence than the name.
        var label = name.startIndex
        var parent: Substring?
        for index in name.utf8.indices where name.utf8[index] == dot {
            guard index != label else { return true }
            if rules.exceptions.contains(String(name[label...])) { return false }
            label = name.utf8.index(after: index)
            parent = parent ?? name[label...]
        }
        guard label != name.endIndex, let parent else { return true }
        return rules.exact.contains(String(name)) || rules.wildcardParents.contains(String(parent))
    }

    /// The rules of ``ruleText`` by kind, built on first use; a `static let` is initialized once,
    /// thread-safely.
    private static let rules = Rules(ruleText)

    private struct Rules: Sendable {
        /// Plain rules: `co.uk`.
        var exact: Set<String> = []
        /// Wildcard rules without their `*.`: `*.ck` is stored as `ck`.
        var wildcardParents: Set<String> = []
        /// Exception rules without their `!`: `!www.ck` is stored as `www.ck`.
        var exceptions: Set<String> = []

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("!") {
                    exceptions.insert(String(line.dropFirst()))
                } else if line.hasPrefix("*.") {
                    wildcardParents.insert(String(line.dropFirst(2)))
                } else {
                    exact.insert(String(line))
                }
            }
        }
    }
}
