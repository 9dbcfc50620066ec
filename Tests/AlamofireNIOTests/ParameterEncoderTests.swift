import AlamofireNIO
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct ParameterEncoderTests {
    func request(_ url: String = "https://httpbin.org/get", _ method: HTTPMethod = .get) throws -> URLRequest {
        try URLRequest(url: url, method: method)
    }

    func body(_ request: URLRequest) -> String? { request.httpBody.map { String(decoding: $0, as: UTF8.self) } }

    @Test func seedGetExampleGoesIntoTheQuery() throws {
        let encoders: [URLEncodedFormParameterEncoder] = [
            .default, URLEncodedFormParameterEncoder(destination: .methodDependent), .urlEncodedForm,
        ]
        for encoder in encoders {
            let encoded = try encoder.encode(["foo": "bar"], into: request())
            #expect(encoded.url?.absoluteString == "https://httpbin.org/get?foo=bar")
            #expect(encoded.httpBody == nil)
        }
    }

    @Test func queryIsAppendedToAnExistingOne() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(["b": "2"], into: request("https://httpbin.org/get?a=1"))
        #expect(encoded.url?.absoluteString == "https://httpbin.org/get?a=1&b=2")
    }

    @Test func seedPostExampleGoesIntoTheBody() throws {
        let parameters: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        for encoder in [URLEncodedFormParameterEncoder.default, URLEncodedFormParameterEncoder(destination: .httpBody)] {
            let encoded = try encoder.encode(parameters, into: request("https://httpbin.org/post", .post))
            #expect(body(encoded) == "baz%5B%5D=a&baz%5B%5D=b&foo%5B%5D=bar&qux%5B%5D=x&qux%5B%5D=y&qux%5B%5D=z")
            #expect(encoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
            #expect(encoded.url?.absoluteString == "https://httpbin.org/post")
        }
    }

    @Test(arguments: [("GET", true), ("HEAD", true), ("DELETE", true), ("POST", false), ("PUT", false), ("PATCH", false)])
    func methodDependentDestination(method: String, inQuery: Bool) throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(
            ["a": "1"], into: request("https://x.y/", HTTPMethod(rawValue: method)))
        #expect((encoded.url?.query == "a=1") == inQuery)
        #expect((encoded.httpBody != nil) == !inQuery)
    }

    @Test func explicitDestinationsOverrideTheMethod() throws {
        let query = try URLEncodedFormParameterEncoder(destination: .queryString).encode(["a": "1"], into: request("https://x.y/", .post))
        #expect(query.url?.query == "a=1")
        let body = try URLEncodedFormParameterEncoder(destination: .httpBody).encode(["a": "1"], into: request("https://x.y/", .get))
        #expect(self.body(body) == "a=1")
    }

    @Test func existingContentTypeIsKept() throws {
        var original = try request("https://x.y/", .post)
        original.headers.add(.contentType("text/custom"))
        #expect(try URLEncodedFormParameterEncoder.default.encode(["a": "1"], into: original).headers["Content-Type"] == "text/custom")
        #expect(try JSONParameterEncoder.default.encode(["a": "1"], into: original).headers["Content-Type"] == "text/custom")
    }

    @Test func nilParametersLeaveTheRequestAlone() throws {
        let original = try request()
        #expect(try URLEncodedFormParameterEncoder.default.encode(nil as [String: String]?, into: original) == original)
        #expect(try JSONParameterEncoder.default.encode(nil as [String: String]?, into: original) == original)
    }

    @Test func jsonEncoders() throws {
        struct Login: Encodable {
            let email = "test@test.test"
            let password = "testPassword"
        }
        let encoded = try JSONParameterEncoder.default.encode(Login(), into: request("https://httpbin.org/post", .post))
        #expect(encoded.headers["Content-Type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: try #require(encoded.httpBody)) as? [String: String]
        #expect(object == ["email": "test@test.test", "password": "testPassword"])
        #expect(body(try JSONParameterEncoder.sortedKeys.encode(["b": 1, "a": 2], into: request())) == #"{"a":2,"b":1}"#)
        #expect(body(try JSONParameterEncoder.prettyPrinted.encode(["a": 1], into: request()))?.contains("\n") == true)
        let custom = JSONEncoder()
        custom.keyEncodingStrategy = .convertToSnakeCase
        #expect(body(try JSONParameterEncoder.json(encoder: custom).encode(["aB": 1], into: request())) == #"{"aB":1}"#)
    }

    @Test func encoderFailuresBecomeAFErrors() throws {
        struct Failing: Encodable, Sendable {
            struct Boom: Error {}
            func encode(to encoder: any Encoder) throws { throw Boom() }
        }
        // As in Alamofire: the JSON encoder reports a parameter *encoding* failure, the form encoder an encoder one.
        #expect {
            _ = try JSONParameterEncoder.default.encode(Failing(), into: request())
        } throws: { error in
            guard case .parameterEncodingFailed(.jsonEncodingFailed(let underlying)) = error as? AFError else { return false }
            return underlying is Failing.Boom
        }
        #expect {
            _ = try URLEncodedFormParameterEncoder.default.encode(["a": 1] as [String: Int], into: request()) as URLRequest
            _ = try URLEncodedFormParameterEncoder.default.encode([1, 2], into: request())
        } throws: { error in
            guard case .parameterEncoderFailed(.encoderFailed(let underlying)) = error as? AFError else { return false }
            return underlying is URLEncodedFormEncoder.Error
        }
    }
}

@Suite struct ParameterEncodingTests {
    func request(_ url: String = "https://httpbin.org/get", _ method: HTTPMethod = .get) throws -> URLRequest {
        try URLRequest(url: url, method: method)
    }

    @Test func urlEncodingSortsKeysAndFlattensNesting() throws {
        let parameters: Parameters = [
            "foo": "bar", "array": ["a", 1, true] as [any Sendable], "nested": ["b": 2, "a": ["x": "y"]] as [String: any Sendable],
        ]
        let encoded = try URLEncoding.default.encode(request(), with: parameters)
        #expect(
            encoded.url?.query
                == "array%5B%5D=a&array%5B%5D=1&array%5B%5D=1&foo=bar&nested%5Ba%5D%5Bx%5D=y&nested%5Bb%5D=2")
    }

    @Test func urlEncodingOptions() throws {
        let parameters: Parameters = ["flag": true, "list": [1, 2]]
        let literal = URLEncoding(boolEncoding: .literal)
        #expect(try literal.encode(request(), with: parameters).url?.query == "flag=true&list%5B%5D=1&list%5B%5D=2")
        let noBrackets = URLEncoding(arrayEncoding: .noBrackets)
        #expect(try noBrackets.encode(request(), with: parameters).url?.query == "flag=1&list=1&list=2")
        let indexed = URLEncoding(arrayEncoding: .indexInBrackets)
        #expect(try indexed.encode(request(), with: parameters).url?.query == "flag=1&list%5B0%5D=1&list%5B1%5D=2")
    }

    /// `.literal` writes Bools, never numbers, as `true`/`false`: numbers that came through
    /// `JSONSerialization` or `NSNumber` (which also cast to `Bool`) stay numbers.
    @Test func literalBoolEncodingLeavesNumbersAlone() throws {
        let json = try JSONSerialization.jsonObject(with: Data(#"{"one":1,"zero":0,"yes":true}"#.utf8)) as? Parameters
        let parameters: Parameters = (json ?? [:]).merging(["number": NSNumber(value: 1), "bool": NSNumber(value: false)]) { $1 }
        let literal = URLEncoding(boolEncoding: .literal)
        #expect(try literal.encode(request(), with: parameters).url?.query == "bool=false&number=1&one=1&yes=true&zero=0")
    }

    @Test func urlEncodingDestinations() throws {
        let body = try URLEncoding.httpBody.encode(request(), with: ["a b": "c&d"])
        #expect(body.httpBody.map { String(decoding: $0, as: UTF8.self) } == "a%20b=c%26d")
        #expect(body.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        let query = try URLEncoding.queryString.encode(request("https://a.b/c?x=1", .post), with: ["y": "2"])
        #expect(query.url?.query == "x=1&y=2")
        #expect(try URLEncoding.default.encode(request("https://a.b/", .post), with: ["y": "2"]).httpBody == Data("y=2".utf8))
        #expect(try URLEncoding.default.encode(request(), with: [:]).url?.absoluteString == "https://httpbin.org/get")
    }

    @Test func jsonEncodingWritesTheBody() throws {
        let encoded = try JSONEncoding.default.encode(request("https://a.b/", .post), with: ["a": [1, 2], "b": "c"])
        #expect(encoded.headers["Content-Type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: try #require(encoded.httpBody)) as? NSDictionary
        #expect(object == ["a": [1, 2], "b": "c"] as NSDictionary)
        let array = try JSONEncoding.default.encode(request("https://a.b/", .post), withJSONObject: [1, 2, 3])
        #expect(array.httpBody == Data("[1,2,3]".utf8))
    }

    @Test func invalidJSONIsAnAFError() throws {
        #expect {
            _ = try JSONEncoding.default.encode(request(), with: ["date": Date()])
        } throws: { error in
            guard case .parameterEncodingFailed(.jsonEncodingFailed(let underlying)) = error as? AFError else { return false }
            return underlying is JSONEncoding.Error
        }
        #expect(
            JSONEncoding.Error.invalidJSONObject.localizedDescription
                == "Invalid JSON object provided for parameter or object encoding. "
                + "This is most likely due to a value which can't be represented in Objective-C.")
    }

    @Test func propertyListEncodingWritesXML() throws {
        let encoded = try PropertyListEncoding.default.encode(request("https://a.b/", .post), with: ["a": "b", "n": 1])
        #expect(encoded.headers["Content-Type"] == "application/x-plist")
        let decoded = try PropertyListSerialization.propertyList(from: try #require(encoded.httpBody), format: nil) as? NSDictionary
        #expect(decoded == ["a": "b", "n": 1] as NSDictionary)
        #expect(encoded.httpBody.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("<?xml") == true)
    }
}
