public import AlamofireNIO
import Foundation

/// What `af`'s positional arguments ask for, read as HTTPie reads them: `[METHOD] URL [ITEM…]`.
///
/// The method is optional: the first argument is one when it is a known method, or all letters
/// and followed by a URL or by something that is not a request item; without one the method is GET, or POST when there is a body. The URL may omit its
/// scheme (`http://` is assumed) and, as `:8080/get` or `:/get`, its host (`localhost`). Body
/// fields make a JSON object by default, a URL-encoded form with `--form`, and a multipart form when
/// a file is attached (or with `--multipart`).
public struct RequestPlan: Sendable {
    /// How the body is sent.
    public enum Body: Sendable, Equatable {
        /// No body.
        case none
        /// A JSON object of the fields, in order.
        case json(JSONValue)
        /// `application/x-www-form-urlencoded` fields, in order.
        case form([Pair])
        /// A multipart form: its text fields, then its files.
        case multipart(fields: [Pair], files: [Pair])
    }

    /// A name and a value.
    public struct Pair: Sendable, Equatable {
        /// The name.
        public var name: String
        /// The value (a path, for a multipart form's files).
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The request's method.
    public var method: HTTPMethod
    /// The URL, with the query items added.
    public var url: URL
    /// The headers the items set, in order.
    public var headers: HTTPHeaders
    /// The headers the items remove (`Name:`), lowercased.
    public var removedHeaders: Set<String>
    /// The body.
    public var body: Body

    /// Reads the positional arguments.
    /// - Parameters:
    ///   - arguments: `[METHOD] URL [ITEM…]`.
    ///   - form:      Whether fields make a URL-encoded form rather than JSON.
    ///   - multipart: Whether fields make a multipart form even without a file.
    ///   - readFile:  Reads the files `=@` and `:=@` items name.
    /// - Throws: ``RequestItem/ParseError`` for a missing URL, a bad URL or a bad item.
    public init(
        arguments: [String], form: Bool = false, multipart: Bool = false,
        readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    ) throws {
        var rest = arguments[...]
        var explicitMethod: HTTPMethod?
        if rest.count >= 2, let first = rest.first, first.allSatisfy({ $0.isASCII && $0.isLetter }),
            Self.knownMethods.contains(first.uppercased()) || Self.looksLikeURL(rest[rest.startIndex + 1])
                || !RequestItem.looksLikeItem(rest[rest.startIndex + 1])
        {
            explicitMethod = HTTPMethod(rawValue: first.uppercased())
            rest = rest.dropFirst()
        }
        guard let urlArgument = rest.popFirst() else { throw RequestItem.ParseError(description: "give a URL") }
        let items = try rest.map { try RequestItem(parsing: $0, readFile: readFile) }

        headers = HTTPHeaders()
        removedHeaders = []
        var query: [URLQueryItem] = []
        var fields: [Pair] = []
        var jsonMembers: [(key: String, value: JSONValue)] = []
        var files: [Pair] = []
        for item in items {
            switch item {
            case .header(let name, let value?): headers.add(name: name, value: value)
            case .header(let name, nil): removedHeaders.insert(name.lowercased())
            case .query(let name, let value): query.append(URLQueryItem(name: name, value: value))
            case .field(let name, let value):
                fields.append(Pair(name: name, value: value))
                jsonMembers.append((name, .string(value)))
            case .jsonField(let name, let value):
                guard !form, !multipart else {
                    throw RequestItem.ParseError(
                        description: "\"\(name):=…\" is JSON: it cannot go in a form (drop --form or use \(name)=…)")
                }
                jsonMembers.append((name, value))
            case .file(let name, let path): files.append(Pair(name: name, value: path))
            }
        }
        if !files.isEmpty, !jsonMembers.isEmpty, fields.count != jsonMembers.count {
            throw RequestItem.ParseError(description: "a file goes in a multipart form, which cannot hold raw JSON fields (:=)")
        }
        if multipart || !files.isEmpty {
            body = .multipart(fields: fields, files: files)
        } else if form {
            body = fields.isEmpty ? .none : .form(fields)
        } else {
            body = jsonMembers.isEmpty ? .none : .json(.object(jsonMembers))
        }
        method = explicitMethod ?? (body == .none ? .get : .post)
        url = try Self.url(from: urlArgument, adding: query)
    }

    /// Methods taken as such whatever follows them (`af put localhost:8080/x`).
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "QUERY"]

    /// Whether an argument reads as a URL rather than a request item: it has a scheme (`://`), is a
    /// localhost shorthand (`:8080/x`), or is a host with an optional port and path (`example.org/?a=b`,
    /// `localhost:8080/x`).
    static func looksLikeURL(_ argument: String) -> Bool {
        if argument.contains("://") || argument.hasPrefix(":") || argument.hasPrefix("[") { return true }
        let authority = argument.prefix { $0 != "/" }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = host.first, !name.isEmpty,
            name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }),
            // A header item (`X-Count:5`) has neither a dot nor a slash; `localhost` stands alone.
            name.contains(".") || name.lowercased() == "localhost" || argument.contains("/")
        else { return false }
        return host.count == 1 || host[1].allSatisfy(\.isNumber) && !host[1].isEmpty
    }

    /// The URL an argument names, with HTTPie's shorthands, and `query` appended to its own query.
    static func url(from argument: String, adding query: [URLQueryItem]) throws -> URL {
        var text = argument
        if text.hasPrefix(":") {
            // `:8080/path`, `:/path` and `:` mean localhost.
            let rest = text.dropFirst()
            text = "http://localhost" + (rest.first == "/" || rest.isEmpty ? "" : ":") + rest
        } else if !text.contains("://") {
            text = "http://" + text
        }
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw RequestItem.ParseError(description: "\"\(argument)\" is not an http or https URL")
        }
        if !query.isEmpty {
            // Escaped as Alamofire's URL encoding escapes query values (so `&`, `=` and `+` survive).
            let added = query.map {
                URLQueryItem(name: URLEncoding.default.escape($0.name), value: $0.value.map(URLEncoding.default.escape))
            }
            components.percentEncodedQueryItems = (components.percentEncodedQueryItems ?? []) + added
        }
        if components.path.isEmpty { components.path = "/" }
        guard let url = components.url else { throw RequestItem.ParseError(description: "\"\(argument)\" is not a URL") }
        return url
    }
}
