import AlamofireNIO
import HTTPBinServer
import TestWaits
import Testing

/// Code written for Alamofire: static serializer factories, `Empty`, `emptyResponseAllowed(forRequest:response:)`,
/// and Foundation's networking types visible through `import AlamofireNIO` alone.
@Suite struct SerializerFactoryTests {
    struct Slide: Decodable, Sendable {
        let title: String
    }

    struct SlideShow: Decodable, Sendable {
        let slideshow: Show
        struct Show: Decodable, Sendable {
            let title: String
            let slides: [Slide]
        }
    }

    @Test func staticFactoriesNameSerializersForDataAndDownloads() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let decoded = try await AF.request(server.url("/json")).serializingResponse(using: .decodable(of: SlideShow.self)).value
            #expect(decoded.slideshow.title == "Sample Slide Show")
            let text = try await AF.request(server.url("/robots.txt")).serializingResponse(using: .string).value
            #expect(text.hasPrefix("User-agent: *"))
            let data = try await AF.request(server.url("/bytes/16")).serializingResponse(using: .data).value
            #expect(data.count == 16)
            let empty = try await AF.request(server.url("/status/200")).serializingResponse(using: .data(emptyResponseCodes: [200])).value
            #expect(empty.isEmpty)
            let download = AF.download(server.url("/json"))
            let downloaded = try await download.serializingDownload(using: .decodable(of: SlideShow.self)).value
            #expect(downloaded.slideshow.slides.count == 2)
            if let fileURL = download.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            let viaHandler: String = try await completion { done in
                AF.request(server.url("/robots.txt")).response(responseSerializer: .string) { done($0.result) }
            }.get()
            #expect(viaHandler == text)
        }
    }

    @Test func emptyIsEquatableAndEmptyResponsesAreAllowedAsAlamofireSpellsIt() {
        #expect(Empty.value == Empty.emptyValue())
        var head = URLRequest(url: URL(string: "http://127.0.0.1:1/")!)
        head.httpMethod = "HEAD"
        let serializer = DataResponseSerializer()
        #expect(serializer.emptyResponseAllowed(forRequest: head, response: nil))
        let ok = HTTPURLResponse(url: head.url!, statusCode: 200, httpVersion: nil, headerFields: nil)
        #expect(!serializer.emptyResponseAllowed(forRequest: nil, response: ok))
    }
}
