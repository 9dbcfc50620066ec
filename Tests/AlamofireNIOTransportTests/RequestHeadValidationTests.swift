import Testing

@testable import AlamofireNIOTransport

/// ``RequestHeadValidation``'s byte classes, against RFC 9110's lists for every byte.
@Suite struct RequestHeadValidationTests {
    @Test func tokensAreExactlyTheTcharBytes() {
        let tchar = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~".utf8)
        for byte in UInt8(0)...UInt8(127) {
            let text = String(decoding: [byte], as: UTF8.self)
            #expect(RequestHeadValidation.isToken(text) == tchar.contains(byte), "byte \(byte)")
        }
        #expect(!RequestHeadValidation.isToken(""))
        #expect(!RequestHeadValidation.isToken("Zoë"))
    }

    /// What NIO's own validator allowed on HTTP/1.1 before this check took its place: RFC 3986's
    /// characters and `%`, nothing else.
    @Test func requestTargetsAreExactlyRFC3986Bytes() {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)
        for byte in UInt8(0)...UInt8(255) {
            let target = "/a" + String(decoding: [byte], as: UTF8.self)
            #expect(RequestHeadValidation.isRequestTarget(target) == allowed.contains(byte), "byte \(byte)")
        }
        #expect(!RequestHeadValidation.isRequestTarget(""))
        #expect(RequestHeadValidation.isRequestTarget("[::1]:443"))
        #expect(RequestHeadValidation.isRequestTarget("http://example.com/p%20q?x=1&y=%7C#f"))
    }

    @Test func fieldValuesRefuseControlBytesButTab() {
        for byte in UInt8(0)...UInt8(127) {
            let allowed = byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
            #expect(RequestHeadValidation.isFieldValue("a" + String(decoding: [byte], as: UTF8.self) + "b") == allowed, "byte \(byte)")
        }
        #expect(RequestHeadValidation.isFieldValue("Zoë"))
    }

    /// Values are read eight bytes at a time: every byte class at every offset of a word, and in the
    /// tail after the last whole word, is judged as alone.
    @Test func fieldValuesAreJudgedTheSameAtEveryOffset() {
        let filler = Array("abcdefghijklmnopqrstuvw".utf8)
        for byte in UInt8(0)...UInt8(255) {
            let allowed = byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
            for offset in 0..<filler.count {
                var bytes = filler
                bytes[offset] = byte
                // A byte above 0x7F alone is not UTF-8: it becomes U+FFFD's three bytes, as allowed.
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(RequestHeadValidation.isFieldValue(text) == allowed, "byte \(byte) at \(offset)")
            }
        }
        #expect(RequestHeadValidation.isFieldValue(String(repeating: "\t", count: 17)))
        #expect(RequestHeadValidation.isFieldValue(""))
    }
}
