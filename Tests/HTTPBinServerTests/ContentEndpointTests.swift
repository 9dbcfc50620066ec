import CZlib
import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

@Suite struct ContentEndpointTests {
    @Test(arguments: [("gzip", "gzipped"), ("deflate", "deflated")])
    func compressedBodiesInflate(path: String, flag: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/\(path)"))
            #expect(response.header("Content-Encoding") == path)
            let inflated = try #require(inflate(response.body))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(inflated)) as? [String: Any])
            #expect(json[flag] as? Bool == true)
            #expect(json["method"] as? String == "GET")
            #expect(json["origin"] as? String == "127.0.0.1")
        }
    }

    @Test func jsonIsTheSlideshow() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/json"))
            #expect(response.header("Content-Type") == "application/json")
            let slideshow = response.json["slideshow"] as? [String: Any]
            #expect(slideshow?["title"] as? String == "Sample Slide Show")
            #expect((slideshow?["slides"] as? [Any])?.count == 2)
        }
    }

    @Test func textDocuments() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let xml = try await fetch(server.url("/xml"))
            #expect(xml.header("Content-Type") == "application/xml")
            #expect(xml.text.hasPrefix("<?xml version='1.0' encoding='us-ascii'?>\n<slideshow"))
            let html = try await fetch(server.url("/html"))
            #expect(html.header("Content-Type") == "text/html; charset=utf-8")
            #expect(html.text.hasPrefix("<!DOCTYPE html>"))
            #expect(try await fetch(server.url("/robots.txt")).text == "User-agent: *\nDisallow: /deny\n")
            let utf8 = try await fetch(server.url("/encoding/utf8"))
            #expect(utf8.header("Content-Type") == "text/html; charset=utf-8")
            #expect(utf8.text.contains("日本語: いろはにほへと"))
        }
    }

    @Test func pngIsValid() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let png = try await fetch(server.url("/image/png")).body
            #expect(png.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            // IHDR: 16×16, 8-bit RGB.
            #expect(Array(png[12..<16]) == Array("IHDR".utf8))
            #expect(Array(png[16..<26]) == [0, 0, 0, 16, 0, 0, 0, 16, 8, 2])
            // Every chunk's CRC matches, and the image data inflates to 16 rows of 1 + 16×3 bytes.
            var offset = 8
            var idat: [UInt8] = []
            while offset < png.count {
                let length = Int(bigEndian(png[offset..<(offset + 4)]))
                let typeAndData = Array(png[(offset + 4)..<(offset + 8 + length)])
                let stored = bigEndian(png[(offset + 8 + length)..<(offset + 12 + length)])
                let computed = typeAndData.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
                #expect(stored == computed)
                if typeAndData.starts(with: Array("IDAT".utf8)) { idat += typeAndData.dropFirst(4) }
                offset += 12 + length
            }
            let rowBytes = 1 + 16 * 3  // filter byte + 16 RGB pixels
            let inflatedCount = inflate(idat)?.count
            #expect(inflatedCount == 16 * rowBytes)
        }
    }

    @Test func jpegHasMarkers() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/image/jpeg"))
            #expect(response.header("Content-Type") == "image/jpeg")
            #expect(response.body.prefix(2) == [0xFF, 0xD8])
            #expect(response.body.suffix(2) == [0xFF, 0xD9])
        }
    }

    @Test func base64Decodes() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(try await fetch(server.url("/base64/SFRUUEJJTiBpcyBhd2Vzb21l")).text == "HTTPBIN is awesome")
            #expect(try await fetch(server.url("/base64/aGk_")).body == [0x68, 0x69, 0x3F])
            #expect(try await fetch(server.url("/base64/!!!")).text.hasPrefix("Incorrect Base64 data"))
        }
    }

    private func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Inflates a gzip or zlib stream (zlib detects which); nil when it is not one.
    private func inflate(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 20)
        let status = input.withUnsafeBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        return status == Z_STREAM_END ? Array(output.prefix(Int(stream.total_out))) : nil
    }
}
