import AlamofireNIO
import Foundation
import Testing

/// `URLRedaction`, as a value.
@Suite struct URLRedactionTests {
    @Test func credentialsAndQueryValuesAreRedactedByDefault() throws {
        let url = try #require(URL(string: "https://ada:secret@example.org:8443/p/a?token=abc&page=2&flag#frag"))
        #expect(
            URLRedaction.default.redacted(url) == "https://REDACTED:REDACTED@example.org:8443/p/a?token=REDACTED&page=REDACTED&flag#frag")
        #expect(
            URLRedaction.openTelemetry.redacted(try #require(URL(string: "http://h/?Signature=x&sig=y&page=2")))
                == "http://h/?Signature=REDACTED&sig=REDACTED&page=2")
        let named = URLRedaction(redactsCredentials: true, queryValues: .named(["X-Amz-Signature"]))
        #expect(named.redacted(try #require(URL(string: "http://h/?x-amz-signature=s&a=1"))) == "http://h/?x-amz-signature=REDACTED&a=1")
        let none = URLRedaction(redactsCredentials: false, queryValues: .none)
        #expect(none.redacted(url) == url.absoluteString)
    }
}
