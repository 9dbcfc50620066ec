import Foundation
import HTTPBinServer
import Testing

@testable import AlamofireNIO

/// What a Session's default `Accept-Encoding` asks for: Alamofire's Apple-platform value when this
/// build decodes Brotli (the `Brotli` trait), else gzip and deflate.
let expectedDefaultAcceptEncoding: String = {
    #if Brotli
    "br;q=1.0, gzip;q=0.9, deflate;q=0.8"
    #else
    "gzip;q=1.0, deflate;q=0.9"
    #endif
}()

#if Brotli && Zstd
/// `br` and `zstd` bodies through a Session: data, download and stream requests all get the
/// decoded bytes, and the default `Accept-Encoding` offers Brotli first, as Alamofire does on Apple
/// platforms.
@Suite struct ContentCodingTests {
    static func expected(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededBytes(seed: seed)
        return Data(generator.next(count))
    }

    @Test func aBrotliResponseIsDecodedAndBrotliIsAskedForFirst() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let data = try await session.request(server.url("/brotli")).validate().serializingData().value
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["brotli"] as? Bool == true)
            #expect((object["headers"] as? [String: String])?["Accept-Encoding"] == "br;q=1.0, gzip;q=0.9, deflate;q=0.8")
        }
    }

    @Test(arguments: ["br", "zstd"])
    func downloadsAndStreamsGetTheDecodedBytes(coding: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let url = server.url("/coded/\(coding)/700000?seed=5")
            let downloaded = try await session.download(url).validate().serializingData().value
            #expect(downloaded == Self.expected(700_000, seed: 5))
            var streamed = Data()
            for await stream in session.streamRequest(url).streamTask().streamingData() {
                if let value = stream.value { streamed += value }
            }
            #expect(streamed == Self.expected(700_000, seed: 5))
        }
    }

    @Test func aZstdBombFailsAsAlamofireReportsALimit() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let response = await session.request(server.url("/zstd-bomb")).serializingData().response
            withExtendedLifetime(session) {}
            guard case .sessionTaskFailed(let underlying as URLError)? = response.error else {
                Issue.record("expected sessionTaskFailed, got \(String(describing: response.error)), \(response.data?.count ?? -1) bytes")
                return
            }
            #expect(underlying.code == .dataLengthExceedsMaximum)
        }
    }
}
#endif
