import Foundation
import NIOCore
import NIOHTTP1

/// What a request head may hold before it is sent, on every pipeline (HTTP/1.1, HTTP/2, the
/// WebSocket handshake, a proxy's `CONNECT`): a method and field names that are RFC 9110 tokens,
/// field values without NUL, CR, LF or other control bytes (HTAB allowed, §5.5), a request target
/// of RFC 3986's characters only. A head that breaks one of these was the caller's mistake:
/// it fails at once as ``TransportError/Kind/badURL``, is never retried and never reaches the wire
/// (where it could split the request or be blamed on the server).
enum RequestHeadValidation {
    /// Throws ``TransportError/Kind/badURL`` naming the first part of `head` that may not be sent.
    static func check(_ head: HTTPRequestHead) throws {
        guard isToken(head.method.rawValue) else {
            throw TransportError(.badURL, "the method \(quoted(head.method.rawValue)) is not an HTTP token")
        }
        guard isRequestTarget(head.uri) else {
            throw TransportError(.badURL, "the request target \(quoted(head.uri)) has a byte that must be percent-encoded")
        }
        for (name, value) in head.headers {
            guard isToken(name) else {
                throw TransportError(.badURL, "the header name \(quoted(name)) is not an HTTP token")
            }
            guard isFieldValue(value) else {
                throw TransportError(.badURL, "the value of the header \(name) contains a control character (NUL, CR, LF or another)")
            }
        }
    }

    /// RFC 9110 §5.6.2: one or more `tchar`s (letters, digits and ``!#$%&'*+-.^_`|~``).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && allBytes(of: text, satisfy: isTokenByte)
    }

    /// RFC 9112 §3.2 with RFC 3986's characters: one or more letters, digits, `-._~`, the
    /// delimiters ``:/?#[]@!$&'()*+,;=`` and `%`. Whitespace, control bytes, bytes above 0x7F and
    /// `"<>\^`{|}` must be percent-encoded.
    static func isRequestTarget(_ text: String) -> Bool {
        !text.isEmpty && allBytes(of: text, satisfy: isTargetByte)
    }

    /// Whether `byte` may appear as it is in a request target.
    @inline(__always)
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        isASCII(byte, in: (below64: 0xAFFF_FFFA_0000_0000, from64: 0x47FF_FFFE_AFFF_FFFF))
    }

    /// Whether `byte` is in a set of ASCII bytes kept as 128 bits: bytes 0-63 in the first word, 64-127
    /// in the second.
    @inline(__always)
    private static func isASCII(_ byte: UInt8, in set: (below64: UInt64, from64: UInt64)) -> Bool {
        byte < 64 ? set.below64 & (1 << byte) != 0 : byte < 128 && set.from64 & (1 << (byte - 64)) != 0
    }

    /// RFC 9110 §5.5: visible bytes, spaces and tabs, and bytes above 0x7F (obs-text); no NUL, CR,
    /// LF or other control byte.
    static func isFieldValue(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { isFieldValue(UnsafeRawBufferPointer($0)) }
            ?? text.utf8.allSatisfy(isFieldValueByte)
    }

    /// Eight bytes at a time: a word with no byte below 0x20 and none equal to 0x7F passes whole
    /// (the test has no false negatives); only a word flagged (a tab, say) is read byte by byte.
    private static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A byte below 0x20 borrows into its high bit; one equal to 0x7F is zero after the xor.
            let below20 = (word &- ones &* 0x20) & ~word & highBits
            let delete = word ^ (ones &* 0x7F)
            let is7F = (delete &- ones) & ~delete & highBits
            if below20 | is7F != 0 {
                for index in offset..<offset + 8 where !isFieldValueByte(bytes[index]) { return false }
            }
            offset += 8
        }
        while offset < bytes.count {
            guard isFieldValueByte(bytes[offset]) else { return false }
            offset += 1
        }
        return true
    }

    @inline(__always)
    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    /// Whether every UTF-8 byte of `text` passes `test`, read from its contiguous storage where it
    /// has one (every native string): a head's checks run on every request, and the storage's loop
    /// costs a fraction of the `UTF8View` iterator's.
    @inline(__always)
    private static func allBytes(of text: String, satisfy test: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where !test(byte) { return false }
            return true
        } ?? text.utf8.allSatisfy(test)
    }

    /// Whether `byte` is a `tchar`.
    @inline(__always)
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isASCII(byte, in: (below64: 0x03FF_6CFA_0000_0000, from64: 0x57FF_FFFF_C7FF_FFFE))
    }

    /// `text` quoted with its control bytes escaped, for an error message.
    private static func quoted(_ text: String) -> String {
        "\""
            + String(
                text.prefix(80).unicodeScalars.map {
                    $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F ? String($0) : $0.escaped(asASCII: true)
                }.joined()) + "\""
    }
}
