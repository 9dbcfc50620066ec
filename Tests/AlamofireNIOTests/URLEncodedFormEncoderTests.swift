import AlamofireNIO
import Foundation
import Testing

/// Byte-exact output of every `URLEncodedFormEncoder` option.
@Suite struct URLEncodedFormEncoderTests {
    func encode(_ value: some Encodable, with encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws -> String {
        try encoder.encode(value)
    }

    @Test func flatDictionaryIsAlphabetized() throws {
        #expect(try encode(["foo": "bar", "baz": "qux", "a": "1"]) == "a=1&baz=qux&foo=bar")
    }

    @Test func alphabetizationCanBeTurnedOff() throws {
        struct Ordered: Encodable {
            let zeta = "z"
            let alpha = "a"
        }
        #expect(try encode(Ordered(), with: URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)) == "zeta=z&alpha=a")
        #expect(try encode(Ordered()) == "alpha=a&zeta=z")
    }

    @Test func seedExampleArraysInBody() throws {
        let parameters: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        #expect(try encode(parameters) == "baz%5B%5D=a&baz%5B%5D=b&foo%5B%5D=bar&qux%5B%5D=x&qux%5B%5D=y&qux%5B%5D=z")
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.ArrayEncoding.brackets, "foo%5B%5D=1&foo%5B%5D=2"),
        (.noBrackets, "foo=1&foo=2"),
        (.indexInBrackets, "foo%5B0%5D=2&foo%5B1%5D=1"),
        (.custom { key, index in "\(key)_\(index)" }, "foo_0=2&foo_1=1"),
    ])
    func arrayEncodings(encoding: URLEncodedFormEncoder.ArrayEncoding, expected: String) throws {
        // As in Alamofire, alphabetization sorts each level's pairs as text, array elements included.
        #expect(try encode(["foo": [2, 1]], with: URLEncodedFormEncoder(arrayEncoding: encoding)) == expected)
    }

    @Test func boolEncodings() throws {
        let flags = ["no": false, "yes": true]
        #expect(try encode(flags) == "no=0&yes=1")
        #expect(try encode(flags, with: URLEncodedFormEncoder(boolEncoding: .literal)) == "no=false&yes=true")
    }

    @Test func dataEncodings() throws {
        let value = ["data": Data([1, 2, 255])]
        // "/" and "?" may stand in a query (RFC 3986 §3.4), so they stay as they are.
        #expect(try encode(value) == "data=AQL/")
        #expect(try encode(value, with: URLEncodedFormEncoder(dataEncoding: .deferredToData)) == "data%5B%5D=1&data%5B%5D=2&data%5B%5D=255")
        #expect(try encode(value, with: URLEncodedFormEncoder(dataEncoding: .custom { "\($0.count)bytes" })) == "data=3bytes")
    }

    @Test func dateEncodings() throws {
        let date = Date(timeIntervalSince1970: 1_600_000_000.5)
        let value = ["date": date]
        #expect(try encode(value) == "date=\(date.timeIntervalSinceReferenceDate)")
        #expect(try encode(value, with: URLEncodedFormEncoder(dateEncoding: .secondsSince1970)) == "date=1600000000.5")
        #expect(try encode(value, with: URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970)) == "date=1600000000500.0")
        #expect(try encode(value, with: URLEncodedFormEncoder(dateEncoding: .iso8601)) == "date=2020-09-13T12%3A26%3A40Z")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy/MM/dd"
        #expect(try encode(value, with: URLEncodedFormEncoder(dateEncoding: .formatted(formatter))) == "date=2020/09/13")
        #expect(try encode(value, with: URLEncodedFormEncoder(dateEncoding: .custom { _ in "then" })) == "date=then")
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.KeyEncoding.useDefaultKeys, "oneTwoThree=1&myURLValue=2&_private=3"),
        (.convertToSnakeCase, "one_two_three=1&my_url_value=2&_private=3"),
        (.convertToKebabCase, "one-two-three=1&my-url-value=2&_private=3"),
        (.capitalized, "OneTwoThree=1&MyURLValue=2&_private=3"),
        (.uppercased, "ONETWOTHREE=1&MYURLVALUE=2&_PRIVATE=3"),
        (.lowercased, "onetwothree=1&myurlvalue=2&_private=3"),
        (.custom { "k_\($0)" }, "k_oneTwoThree=1&k_myURLValue=2&k__private=3"),
    ])
    func keyEncodings(encoding: URLEncodedFormEncoder.KeyEncoding, expected: String) throws {
        struct Keys: Encodable {
            let oneTwoThree = 1
            let myURLValue = 2
            let _private = 3
        }
        let encoder = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false, keyEncoding: encoding)
        #expect(try encode(Keys(), with: encoder) == expected)
    }

    @Test func nestedObjectsUseKeyPathEncoding() throws {
        struct Inner: Encodable {
            let b = "c"
            let d = [1, 2]
        }
        struct Outer: Encodable {
            let a = Inner()
        }
        #expect(try encode(Outer()) == "a%5Bb%5D=c&a%5Bd%5D%5B%5D=1&a%5Bd%5D%5B%5D=2")
        #expect(try encode(Outer(), with: URLEncodedFormEncoder(keyPathEncoding: .dots)) == "a.b=c&a.d%5B%5D=1&a.d%5B%5D=2")
        let custom = URLEncodedFormEncoder.KeyPathEncoding { "-\($0)" }
        #expect(try encode(Outer(), with: URLEncodedFormEncoder(keyPathEncoding: custom)) == "a-b=c&a-d%5B%5D=1&a-d%5B%5D=2")
    }

    @Test func nilEncodings() throws {
        struct Optionals: Encodable {
            let present: String? = "x"
            let absent: String? = nil
            let absentNumber: Int? = nil
        }
        #expect(try encode(Optionals()) == "present=x")
        #expect(try encode(Optionals(), with: URLEncodedFormEncoder(nilEncoding: .dropValue)) == "absent=&absentNumber=&present=x")
        #expect(try encode(Optionals(), with: URLEncodedFormEncoder(nilEncoding: .null)) == "absent=null&absentNumber=null&present=x")
        let custom = URLEncodedFormEncoder.NilEncoding { "none" }
        #expect(try encode(Optionals(), with: URLEncodedFormEncoder(nilEncoding: custom)) == "absent=none&absentNumber=none&present=x")
    }

    @Test func spaceEncodings() throws {
        let value = ["greeting": "hello world"]
        #expect(try encode(value) == "greeting=hello%20world")
        #expect(try encode(value, with: URLEncodedFormEncoder(spaceEncoding: .plusReplaced)) == "greeting=hello+world")
    }

    @Test func reservedCharactersAreEscaped() throws {
        #expect(try encode(["q": "a&b=c?d/e:f#g[h]@i!$'()*+,;"]) == "q=a%26b%3Dc?d/e%3Af%23g%5Bh%5D%40i%21%24%27%28%29%2A%2B%2C%3B")
        // Pairs sort as escaped text, as Alamofire sorts them.
        #expect(try encode(["emoji": "🦅", "é": "ü"]) == "%C3%A9=%C3%BC&emoji=%F0%9F%A6%85")
    }

    @Test func allowedCharactersCanBeWidened() throws {
        var allowed = CharacterSet.afURLQueryAllowed
        allowed.insert(charactersIn: "[]")
        #expect(try encode(["a": ["b"]], with: URLEncodedFormEncoder(allowedCharacters: allowed)) == "a[]=b")
    }

    @Test func numbersAndNestedContainers() throws {
        struct Numbers: Encodable {
            let int = -7
            let double = 1.5
            let unsigned: UInt8 = 255
            let decimal = Decimal(string: "3.25")!
            let url = URL(string: "https://a.b/c?d=e")!
        }
        // A URL is written by its own `encode(to:)`, as Alamofire writes it: a keyed container whose
        // integer-valued key (`relative`) becomes an array index, hence `url[]`.
        #expect(try encode(Numbers()) == "decimal=3.25&double=1.5&int=-7&unsigned=255&url%5B%5D=https%3A//a.b/c?d%3De")
    }

    /// A hand-written `encode(to:)` with nested keyed and unkeyed containers and super encoders: the
    /// values land where Alamofire's encoder puts them (a keyed `superEncoder()` writes into the same
    /// object; an unkeyed one writes at the array's own path; a key written twice keeps its last value).
    @Test func handWrittenEncodersWithNestedContainersAndSuperEncoders() throws {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case name, point, tags, parent, again }
            enum PointKeys: String, CodingKey { case x, y }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode("first", forKey: .name)
                var point = container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
                try point.encode(1, forKey: .x)
                try point.encode(2.5, forKey: .y)
                var tags = container.nestedUnkeyedContainer(forKey: .tags)
                try tags.encode("a")
                var inner = tags.nestedContainer(keyedBy: PointKeys.self)
                try inner.encode(true, forKey: .x)
                var superclass = container.superEncoder().container(keyedBy: Keys.self)
                try superclass.encode("from super", forKey: .again)
                var parent = container.superEncoder(forKey: .parent).container(keyedBy: Keys.self)
                try parent.encode("p", forKey: .name)
                try container.encode("second", forKey: .name)
            }
        }
        #expect(
            try encode(Custom()) == "again=from%20super&name=second&parent%5Bname%5D=p&point%5Bx%5D=1&point%5By%5D=2.5"
                + "&tags%5B%5D%5Bx%5D=1&tags%5B%5D=a")
    }

    /// Key encoding applies to each written key as a whole, nested parts included, as Alamofire
    /// applies it; Alamofire's word splitting takes the first character as a word start (`ABC` → `a_bc`).
    @Test func keyEncodingAppliesToTheWholeWrittenKey() throws {
        let nested: [String: [String: String]] = ["userName": ["firstName": "a"]]
        #expect(try encode(nested, with: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)) == "user_name%5Bfirst_name%5D=a")
        #expect(try encode(nested, with: URLEncodedFormEncoder(keyEncoding: .capitalized)) == "UserName%5BfirstName%5D=a")
        #expect(try encode(nested, with: URLEncodedFormEncoder(keyEncoding: .custom { "<\($0)>" })) == "%3CuserName%5BfirstName%5D%3E=a")
        #expect(try encode(["ABC": "1"], with: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)) == "a_bc=1")
        #expect(try encode(["myURLValue": "1"], with: URLEncodedFormEncoder(keyEncoding: .convertToKebabCase)) == "my-url-value=1")
    }

    @Test func emptyObjectIsEmpty() throws {
        #expect(try encode([String: String]()) == "")
    }

    @Test func nonObjectRootsAreRejected() {
        for value in [AnyEncodable(1), AnyEncodable("text"), AnyEncodable([1, 2])] {
            #expect {
                _ = try URLEncodedFormEncoder().encode(value) as String
            } throws: { error in
                if case .invalidRootObject = error as? URLEncodedFormEncoder.Error { return true }
                return false
            }
        }
    }

    @Test func dataOutputIsUTF8() throws {
        let data: Data = try URLEncodedFormEncoder().encode(["a": "é"])
        #expect(String(decoding: data, as: UTF8.self) == "a=%C3%A9")
    }
}

/// Type-erases an `Encodable` for tests that encode several kinds of value.
struct AnyEncodable: Encodable {
    let encodeTo: (any Encoder) throws -> Void
    init(_ value: some Encodable) { encodeTo = value.encode(to:) }
    func encode(to encoder: any Encoder) throws { try encodeTo(encoder) }
}
