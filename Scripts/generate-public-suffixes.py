#!/usr/bin/env python3
"""Generates Sources/AlamofireNIOLoading/Policies/PublicSuffixList+Rules.swift from the Public
Suffix List, for the cookie policy's RFC 6265 §5.3 step 5 check.

Reads the list (default: Debian's `publicsuffix` package, /usr/share/publicsuffix/
public_suffix_list.dat), keeps both its ICANN and PRIVATE sections (browsers use both, so
`github.io` is a public suffix), and writes every rule lowercased, in its own syntax (`co.uk`,
`*.ck`, `!www.ck`), plus the punycode form of each rule with non-ASCII labels, sorted and
deduplicated. Rerun after updating the list:

    apt-get install -y publicsuffix && Scripts/generate-public-suffixes.py [path/to/list.dat]
"""
import os
import re
import sys

DEFAULT_LIST = "/usr/share/publicsuffix/public_suffix_list.dat"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
output = os.path.join(root, "Sources", "AlamofireNIOLoading", "Policies", "PublicSuffixList+Rules.swift")


def punycode(rule):
    """The rule with each non-ASCII label IDNA-encoded, or None if a label cannot be encoded."""
    prefix, body = ("!", rule[1:]) if rule.startswith("!") else ("", rule)
    labels = []
    for label in body.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append(label.encode("idna").decode("ascii").lower())
        except UnicodeError as error:
            print(f"warning: skipping punycode form of {rule!r}: {error}", file=sys.stderr)
            return None
    return prefix + ".".join(labels)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_LIST
    rules = set()
    version = None
    with open(path, encoding="utf-8") as source:
        for line in source:
            line = line.strip()
            match = re.match(r"//\s*(VERSION|COMMIT):\s*(\S.*)$", line)
            if match and version is None:
                version = f"{match.group(1)}: {match.group(2)}"
            if not line or line.startswith("//"):
                continue
            rule = line.split()[0].lower()
            rules.add(rule)
            if not rule.isascii():
                encoded = punycode(rule)
                if encoded:
                    rules.add(encoded)

    rules = sorted(rules)
    for rule in rules:
        assert "\\" not in rule and '"""' not in rule, f"rule would break the string literal: {rule!r}"

    header = [
        f"// Generated from {os.path.basename(path)}" + (f" ({version})" if version else "") + ".",
        f"// {len(rules)} rules, ICANN and PRIVATE sections, with punycode forms of IDN rules.",
        "// Regenerate with Scripts/generate-public-suffixes.py; do not edit.",
    ]
    # Indented one level past `static let`, with the closing delimiter, as swift-format requires.
    body = "\n".join(f"        {rule}" for rule in rules)
    text = "\n".join(header) + f"""

extension PublicSuffixList {{
    /// The Public Suffix List's rules, one a line, parsed once by ``PublicSuffixList``.
    static let ruleText = \"\"\"
{body}
        \"\"\"
}}
"""
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    print(f"wrote {len(rules)} rules to {os.path.relpath(output, root)}")


if __name__ == "__main__":
    main()
