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

    @Test func fieldValuesRefuseControlBytesButTab() {
        for byte in UInt8(0)...UInt8(127) {
            let allowed = byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
            #expect(RequestHeadValidation.isFieldValue("a" + String(decoding: [byte], as: UTF8.self) + "b") == allowed, "byte \(byte)")
        }
        #expect(RequestHeadValidation.isFieldValue("Zoë"))
    }
}
