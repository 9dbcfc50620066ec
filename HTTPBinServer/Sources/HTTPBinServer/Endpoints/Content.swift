import Foundation
import HTTPTypes
import Hummingbird

/// Fixed documents in several formats, compressed bodies and `/base64/:value`.
enum Content {
    /// The shape httpbin's `/json` has: a slideshow with a list of slides.
    static let slideshowJSON = """
        {
          "slideshow": {
            "author": "Yours Truly",
            "date": "date of publication",
            "slides": [
              {
                "title": "Wake up to WonderWidgets!",
                "type": "all"
              },
              {
                "items": [
                  "Why <em>WonderWidgets</em> are great",
                  "Who <em>buys</em> WonderWidgets"
                ],
                "title": "Overview",
                "type": "all"
              }
            ],
            "title": "Sample Slide Show"
          }
        }

        """

    static let slideshowXML = """
        <?xml version='1.0' encoding='us-ascii'?>
        <slideshow title="Sample Slide Show" date="Date of publication" author="Yours Truly">
            <slide type="all">
                <title>Wake up to WonderWidgets!</title>
            </slide>
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>
        </slideshow>

        """

    static let html = """
        <!DOCTYPE html>
        <html>
          <head><meta charset="utf-8"><title>AlamofireNIO HTTPBin</title></head>
          <body>
            <h1>A page to fetch</h1>
            <p>This page is served by the bundled HTTPBin server so that clients have some HTML to read.</p>
          </body>
        </html>

        """

    static let utf8Sample = """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>UTF-8</title></head><body>
        <p>English: The quick brown fox jumps over the lazy dog.</p>
        <p>Deutsch: Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.</p>
        <p>Ελληνικά: Γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο.</p>
        <p>Русский: Съешь же ещё этих мягких французских булок, да выпей чаю.</p>
        <p>日本語: いろはにほへと ちりぬるを</p>
        <p>中文: 敏捷的棕色狐狸跳过了懒狗。</p>
        <p>Emoji: 🦅 🚀 ✅</p>
        </body></html>

        """

    static func document(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        switch ex.segments {
        case ["json"]: return ex.text(slideshowJSON, contentType: "application/json")
        case ["xml"]: return ex.text(slideshowXML, contentType: "application/xml")
        case ["html"]: return ex.text(html, contentType: "text/html; charset=utf-8")
        case ["robots.txt"]: return ex.text("User-agent: *\nDisallow: /deny\n")
        case ["encoding", "utf8"]: return ex.text(utf8Sample, contentType: "text/html; charset=utf-8")
        case ["image", "png"]: return ex.bytes(try Images.png(), contentType: "image/png")
        case ["image", "jpeg"]: return ex.bytes(Images.jpeg(), contentType: "image/jpeg")
        default: throw HTTPBinError(.notFound)
        }
    }

    /// `/gzip` and `/deflate`: `{"gzipped"|"deflated": true, "headers", "method", "origin"}`, compressed.
    static func compressed(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        guard ex.segments.count == 1 else { throw HTTPBinError(.notFound) }
        let isGzip = ex.segments[0] == "gzip"
        let object: [String: Any] = [
            isGzip ? "gzipped" : "deflated": true, "headers": ex.echoedHeaders, "method": ex.method.rawValue, "origin": ex.origin,
        ]
        let json = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let body = try Zlib.compress(Array(json), format: isGzip ? .gzip : .zlib)
        return ex.bytes(body, contentType: "application/json", headers: [.contentEncoding: isGzip ? "gzip" : "deflate"])
    }

    /// `/gzip-bomb`: 64 MiB of zeros, gzip-compressed to about 64 KiB (a ratio near 1000), for
    /// testing that clients limit decompression.
    static func gzipBomb(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        return ex.bytes(try bomb.get(), contentType: "application/octet-stream", headers: [.contentEncoding: "gzip"])
    }

    private static let bomb = Result { try Zlib.compress([UInt8](repeating: 0, count: 64 * 1024 * 1024), format: .gzip, level: 9) }

    /// `/base64/:value`: the URL-safe base64 value, decoded.
    static func base64(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        guard rest.count == 1 else { throw HTTPBinError(.notFound) }
        var text = rest[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else {
            return ex.text("Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l", contentType: "text/html; charset=utf-8")
        }
        return ex.bytes(data, contentType: "text/html; charset=utf-8")
    }
}
