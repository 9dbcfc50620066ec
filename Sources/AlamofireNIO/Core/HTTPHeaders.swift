#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// An ordered list of header fields whose names compare case-insensitively.
///
/// Adding a field whose name is already present replaces its value in place, as Alamofire does.
/// ```swift
/// let headers: HTTPHeaders = [.authorization(bearerToken: token), .accept("application/json")]
/// ```
public struct HTTPHeaders: Equatable, Hashable, Sendable {
    private var headers: [HTTPHeader] = []

    /// An empty set of headers.
    public init() {}

    /// Headers from an array; a later field with the same name replaces an earlier one.
    public init(_ headers: [HTTPHeader]) {
        headers.forEach { update($0) }
    }

    /// Headers from a dictionary (whose order is not defined).
    public init(_ dictionary: [String: String]) {
        dictionary.forEach { update(HTTPHeader(name: $0.key, value: $0.value)) }
    }

    /// Adds the field, replacing the value of an existing field with the same name.
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Adds the field, replacing the value of an existing field with the same name.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Replaces the value of the field with the same name, or appends the field.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Replaces the value of the field with the same name, or appends the field.
    public mutating func update(_ header: HTTPHeader) {
        if let index = headers.index(of: header.name) {
            headers[index] = header
        } else {
            headers.append(header)
        }
    }

    /// Removes the field with the given name, if present.
    public mutating func remove(name: String) {
        guard let index = headers.index(of: name) else { return }
        headers.remove(at: index)
    }

    /// Sorts the fields by name, case-insensitively.
    public mutating func sort() {
        headers.sort { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// The fields sorted by name, case-insensitively.
    public func sorted() -> HTTPHeaders {
        var headers = self
        headers.sort()
        return headers
    }

    /// The value of the field with the given name.
    public func value(for name: String) -> String? {
        headers.index(of: name).map { headers[$0].value }
    }

    /// The value of the field with the given name; setting nil removes it.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The fields as a dictionary.
    public var dictionary: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether both hold the same fields, with the same values, in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.headers == rhs.headers
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates headers from a dictionary literal; a later field with the same name replaces an earlier one.
    public init(dictionaryLiteral elements: (String, String)...) {
        elements.forEach { update(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Creates headers from an array literal of fields; a later field with the same name replaces an earlier one.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: Sequence {
    /// Returns an iterator over the fields, in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> {
        headers.makeIterator()
    }
}

extension HTTPHeaders: Collection {
    /// The position of the first field.
    public var startIndex: Int { headers.startIndex }
    /// The position one past the last field.
    public var endIndex: Int { headers.endIndex }
    /// The field at `position`.
    public subscript(position: Int) -> HTTPHeader { headers[position] }
    /// The position after `i`.
    public func index(after i: Int) -> Int { headers.index(after: i) }
}

extension HTTPHeaders: CustomStringConvertible {
    /// The fields, one `Name: Value` line each.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}

/// One header field.
public struct HTTPHeader: Equatable, Hashable, Sendable {
    /// The field's name.
    public let name: String
    /// The field's value.
    public let value: String

    /// Creates a header field.
    ///
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: the field's value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPHeader: CustomStringConvertible {
    /// The field as `Name: Value`.
    public var description: String { "\(name): \(value)" }
}

extension HTTPHeader {
    /// `Accept`
    public static func accept(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept", value: value) }
    /// `Accept-Charset`
    public static func acceptCharset(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Charset", value: value) }
    /// `Accept-Language`; ``defaultAcceptLanguage`` is built from the process's preferred languages.
    public static func acceptLanguage(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Language", value: value) }
    /// `Accept-Encoding`; ``defaultAcceptEncoding`` lists what AlamofireNIO decodes.
    public static func acceptEncoding(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Encoding", value: value) }

    /// `Authorization: Basic <base64(username:password)>`.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        authorization("Basic \(Data("\(username):\(password)".utf8).base64EncodedString())")
    }

    /// `Authorization: Bearer <token>`.
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// `Authorization` with the given value.
    public static func authorization(_ value: String) -> HTTPHeader { HTTPHeader(name: "Authorization", value: value) }
    /// `Content-Disposition`
    public static func contentDisposition(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Disposition", value: value) }
    /// `Content-Encoding`
    public static func contentEncoding(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Encoding", value: value) }
    /// `Content-Type`
    public static func contentType(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Type", value: value) }
    /// `User-Agent`
    public static func userAgent(_ value: String) -> HTTPHeader { HTTPHeader(name: "User-Agent", value: value) }
    /// `Cache-Control`
    public static func cacheControl(_ value: String) -> HTTPHeader { HTTPHeader(name: "Cache-Control", value: value) }
    /// Returns a `Sec-WebSocket-Protocol` header.
    ///
    /// - Parameter value: The `Sec-WebSocket-Protocol` value.
    /// - Returns:         The header.
    public static func websocketProtocol(_ value: String) -> HTTPHeader { HTTPHeader(name: "Sec-WebSocket-Protocol", value: value) }
}

extension HTTPHeaders {
    /// The headers every `Session` sends by default: `Accept-Encoding`, `Accept-Language`, `User-Agent`.
    public static let `default`: HTTPHeaders = [.defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent]
}

extension HTTPHeader {
    /// The encodings AlamofireNIO decodes, best first: `br;q=1.0, gzip;q=0.9, deflate;q=0.8` (Alamofire's
    /// value on Apple platforms) with the `Brotli` trait, `gzip;q=1.0, deflate;q=0.9` without it.
    /// (`zstd` is decoded with the `Zstd` trait but not asked for, as Alamofire does not.)
    public static let defaultAcceptEncoding: HTTPHeader = {
        #if Brotli
        HTTPHeader.acceptEncoding(["br", "gzip", "deflate"].qualityEncoded())
        #else
        HTTPHeader.acceptEncoding(["gzip", "deflate"].qualityEncoded())
        #endif
    }()

    /// Up to six of the process's preferred languages with decreasing q-values, e.g. `en-US;q=1.0`.
    public static let defaultAcceptLanguage = HTTPHeader.acceptLanguage(Locale.preferredLanguages.prefix(6).qualityEncoded())

    /// `<executable>/<version> (<bundle>; build:<build>; <OS> <version>) AlamofireNIO/<version>`, the
    /// shape Alamofire uses, with what a command-line process knows of itself.
    public static let defaultUserAgent: HTTPHeader = {
        let info = Bundle.main.infoDictionary
        let executable = (info?["CFBundleExecutable"] as? String) ?? ProcessInfo.processInfo.processName
        let bundle = (info?["CFBundleIdentifier"] as? String) ?? "Unknown"
        let appVersion = (info?["CFBundleShortVersionString"] as? String) ?? "Unknown"
        let appBuild = (info?["CFBundleVersion"] as? String) ?? "Unknown"
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let osVersion = "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
        #if os(Linux)
        let osName = "Linux"
        #elseif os(macOS)
        let osName = "macOS"
        #elseif os(Windows)
        let osName = "Windows"
        #else
        let osName = "Unknown"
        #endif
        let agent = "\(executable)/\(appVersion) (\(bundle); build:\(appBuild); \(osName) \(osVersion)) AlamofireNIO/\(AFInfo.version)"
        return .userAgent(agent)
    }()
}

extension Collection<String> {
    /// `a;q=1.0, b;q=0.9, …` as Accept-* headers weight their entries.
    func qualityEncoded() -> String {
        enumerated().map { index, value in
            let quality = 1.0 - Double(index) * 0.1
            return "\(value);q=\(quality)"
        }.joined(separator: ", ")
    }
}

extension [HTTPHeader] {
    fileprivate func index(of name: String) -> Int? {
        let lowercased = name.lowercased()
        return firstIndex { $0.name.lowercased() == lowercased }
    }
}

extension URLRequest {
    /// The request's header fields as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }
}

extension HTTPURLResponse {
    /// The response's header fields as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        (allHeaderFields as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders()
    }
}

extension URLSessionConfiguration {
    /// The configuration's `httpAdditionalHeaders` as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        get { (httpAdditionalHeaders as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { httpAdditionalHeaders = newValue.dictionary }
    }
}
