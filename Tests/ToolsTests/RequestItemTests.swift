import AFCommandLine
import AlamofireNIO
import Foundation
import Testing

/// HTTPie's request items and `[METHOD] URL [ITEM…]`, as values.
@Suite struct RequestItemTests {
    @Test(arguments: [
        ("X-Token:abc", RequestItem.header(name: "X-Token", value: "abc")),
        ("Referer:http://example.org/a?b=c", .header(name: "Referer", value: "http://example.org/a?b=c")),
        ("User-Agent:", .header(name: "User-Agent", value: nil)),
        ("X-Empty;", .header(name: "X-Empty", value: "")),
        ("q==swift nio", .query(name: "q", value: "swift nio")),
        ("url==http://a.b/?x=y", .query(name: "url", value: "http://a.b/?x=y")),
        ("name=Ada", .field(name: "name", value: "Ada")),
        ("empty=", .field(name: "empty", value: "")),
        ("count:=3", .jsonField(name: "count", value: .number("3"))),
        ("tags:=[\"a\",true,null]", .jsonField(name: "tags", value: .array([.string("a"), .bool(true), .null]))),
        ("photo@/tmp/a.png", .file(name: "photo", path: "/tmp/a.png")),
        ("a\\=b=c", .field(name: "a=b", value: "c")),
        ("key\\:x:y", .header(name: "key:x", value: "y")),
        ("email=a\\@b.c", .field(name: "email", value: "a@b.c")),
        ("path:=\"C:\\\\dir\\n\"", .jsonField(name: "path", value: .string("C:\\dir\n"))),
    ])
    func itemsAreReadByTheirEarliestSeparator(argument: String, item: RequestItem) throws {
        #expect(try RequestItem(parsing: argument) == item)
    }

    @Test func fieldsCanComeFromFiles() throws {
        let files = ["/bio.txt": Data("Hello\n".utf8), "/data.json": Data("{\"a\": [1, 2]}".utf8)]
        let read: (String) throws -> Data = { path in
            guard let data = files[path] else { throw CocoaError(.fileNoSuchFile) }
            return data
        }
        #expect(try RequestItem(parsing: "bio=@/bio.txt", readFile: read) == .field(name: "bio", value: "Hello\n"))
        #expect(
            try RequestItem(parsing: "data:=@/data.json", readFile: read)
                == .jsonField(name: "data", value: .object([("a", .array([.number("1"), .number("2")]))])))
        #expect(throws: RequestItem.ParseError.self) { try RequestItem(parsing: "bio=@/missing", readFile: read) }
    }

    @Test(arguments: ["plain", "=value", ":=1", "bad:=json{", "n:=01"])
    func malformedItemsAreRefused(argument: String) {
        #expect(throws: RequestItem.ParseError.self) { try RequestItem(parsing: argument) }
    }

    @Test func theMethodIsOptionalAndDefaultsByTheBody() throws {
        let get = try RequestPlan(arguments: ["example.org/get", "a==1"])
        #expect(get.method == .get)
        #expect(get.url.absoluteString == "http://example.org/get?a=1")
        #expect(get.body == .none)
        let post = try RequestPlan(arguments: ["example.org/post", "name=Ada"])
        #expect(post.method == .post)
        let put = try RequestPlan(arguments: ["put", "example.org/put", "name=Ada"])
        #expect(put.method == .put)
        // Any word before a URL is a method, however the URL is spelled.
        let purge = try RequestPlan(arguments: ["PURGE", "http://example.org/x"])
        #expect(purge.method == HTTPMethod(rawValue: "PURGE"))
        #expect(purge.url.absoluteString == "http://example.org/x")
        #expect(try RequestPlan(arguments: ["purge", "example.org/?a=b"]).url.absoluteString == "http://example.org/?a=b")
        #expect(try RequestPlan(arguments: ["LINK", "localhost:8080/x"]).url.absoluteString == "http://localhost:8080/x")
        // A header with a number is an item, not a URL.
        let counted = try RequestPlan(arguments: ["localhost", "X-Count:5"])
        #expect(counted.method == .get)
        #expect(counted.headers == [HTTPHeader(name: "X-Count", value: "5")])
        // A host name of letters followed by an item is the URL, not a method.
        let localhost = try RequestPlan(arguments: ["localhost", "name=Ada"])
        #expect(localhost.method == .post)
        #expect(localhost.url.absoluteString == "http://localhost/")
    }

    @Test func urlShorthandsMeanLocalhostAndHTTP() throws {
        #expect(try RequestPlan(arguments: [":8080/get"]).url.absoluteString == "http://localhost:8080/get")
        #expect(try RequestPlan(arguments: [":/get"]).url.absoluteString == "http://localhost/get")
        #expect(try RequestPlan(arguments: ["https://example.org"]).url.absoluteString == "https://example.org/")
        #expect(throws: RequestItem.ParseError.self) { try RequestPlan(arguments: ["ftp://example.org"]) }
        #expect(throws: RequestItem.ParseError.self) { try RequestPlan(arguments: ["http://"]) }
        #expect(throws: RequestItem.ParseError.self) { try RequestPlan(arguments: []) }
    }

    @Test func queryItemsAreEscapedAsAlamofireEscapesQueries() throws {
        let plan = try RequestPlan(arguments: ["example.org/get?x=1", "q==a&b=c d", "plus==1+1"])
        #expect(plan.url.absoluteString == "http://example.org/get?x=1&q=a%26b%3Dc%20d&plus=1%2B1")
    }

    @Test func fieldsMakeJSONAFormOrAMultipartForm() throws {
        let json = try RequestPlan(arguments: ["example.org", "name=Ada", "age:=36", "X-A:1"])
        #expect(json.body == .json(.object([("name", .string("Ada")), ("age", .number("36"))])))
        #expect(json.headers == [HTTPHeader(name: "X-A", value: "1")])
        let form = try RequestPlan(arguments: ["example.org", "a=1", "a=2"], form: true)
        #expect(form.body == .form([.init(name: "a", value: "1"), .init(name: "a", value: "2")]))
        let multipart = try RequestPlan(arguments: ["example.org", "a=1", "file@/tmp/f.txt"], form: true)
        #expect(multipart.body == .multipart(fields: [.init(name: "a", value: "1")], files: [.init(name: "file", value: "/tmp/f.txt")]))
        #expect(multipart.method == .post)
        #expect(throws: RequestItem.ParseError.self) { try RequestPlan(arguments: ["example.org", "n:=1"], form: true) }
        #expect(throws: RequestItem.ParseError.self) { try RequestPlan(arguments: ["example.org", "n:=1", "f@/x"]) }
        let removed = try RequestPlan(arguments: ["example.org", "User-Agent:"])
        #expect(removed.removedHeaders == ["user-agent"])
    }
}
