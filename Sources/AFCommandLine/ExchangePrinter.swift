public import AlamofireNIO
import Foundation

/// The parts of an exchange `af` prints, as HTTPie's `--print` letters: `H` the request's head,
/// `B` its body, `h` the response's head, `b` its body, `m` the timing.
public struct PrintedParts: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `H`: the request line and headers.
    public static let requestHeaders = PrintedParts(rawValue: 1)
    /// `B`: the request body.
    public static let requestBody = PrintedParts(rawValue: 2)
    /// `h`: the status line and headers.
    public static let responseHeaders = PrintedParts(rawValue: 4)
    /// `b`: the response body.
    public static let responseBody = PrintedParts(rawValue: 8)
    /// `m`: the elapsed time, from the request's metrics.
    public static let metadata = PrintedParts(rawValue: 16)

    /// The parts `letters` name.
    /// - Throws: ``RequestItem/ParseError`` for a letter that names no part.
    public init(letters: String) throws {
        self = []
        for letter in letters {
            switch letter {
            case "H": insert(.requestHeaders)
            case "B": insert(.requestBody)
            case "h": insert(.responseHeaders)
            case "b": insert(.responseBody)
            case "m": insert(.metadata)
            default: throw RequestItem.ParseError(description: "--print: \"\(letter)\" is none of H, B, h, b, m")
            }
        }
    }
}

/// Writes the parts of an exchange as text, the way HTTPie shows them.
public struct ExchangePrinter: Sendable {
    /// Colours, or none.
    public var style: OutputStyle
    /// Whether JSON bodies are indented.
    public var formatsBodies: Bool

    /// Creates a printer.
    public init(style: OutputStyle, formatsBodies: Bool) {
        self.style = style
        self.formatsBodies = formatsBodies
    }

    /// What a binary body shows on a terminal, as in HTTPie.
    public static let binaryNote = """
        +-----------------------------------------+
        | NOTE: binary data not shown in terminal |
        +-----------------------------------------+
        """

    /// The request line and headers: `GET /path?query HTTP/1.1`, `Host`, then the request's own
    /// headers and the session's defaults it does not override.
    public func requestHead(_ request: URLRequest, defaults: HTTPHeaders, protocolName: String?) -> String {
        let url = request.url
        var target = url?.path.isEmpty == false ? url!.path : "/"
        if let query = url?.query { target += "?" + query }
        var headers = HTTPHeaders()
        if let host = url?.host { headers.add(name: "Host", value: url?.port.map { "\(host):\($0)" } ?? host) }
        var sent = HTTPHeaders(request.allHTTPHeaderFields ?? [:])
        for header in defaults where sent.value(for: header.name) == nil { sent.add(header) }
        for header in sent.sorted() { headers.add(header) }
        let line = [
            style.paint(request.httpMethod ?? "GET", .success), style.paint(target, .string),
            style.paint(Self.protocolLabel(protocolName), .protocolName),
        ].joined(separator: " ")
        return ([line] + headers.map(headerLine)).joined(separator: "\n")
    }

    /// The status line and headers, sorted by name.
    public func responseHead(_ response: HTTPURLResponse, protocolName: String?) -> String {
        let code = response.statusCode
        let reason = reasonPhrase(code)
        let color: OutputStyle.Color = code < 300 ? .success : code < 400 ? .redirect : .failure
        let line = style.paint(Self.protocolLabel(protocolName), .protocolName) + " " + style.paint("\(code) \(reason)", color)
        return ([line] + response.headers.sorted().map(headerLine)).joined(separator: "\n")
    }

    /// A body as text: JSON indented (and coloured) when asked, other text as it is, and binary
    /// data as ``binaryNote`` when `toTerminal`. Colours apply only to formatted JSON; nil when binary data should be written as bytes.
    public func body(_ data: Data, contentType: String?, toTerminal: Bool) -> String? {
        guard let text = String(data: data, encoding: .utf8), !text.contains("\0") else {
            return toTerminal ? Self.binaryNote : nil
        }
        if formatsBodies, Self.isJSON(contentType) || contentType == nil, let json = try? JSONValue(parsing: data) {
            return json.prettyPrinted(style: style)
        }
        return text
    }

    /// The timing of the request's last transaction.
    public func metadata(_ metrics: TaskMetrics?) -> String {
        guard let metrics else { return "Elapsed time: unknown" }
        var lines = [String(format: "Elapsed time: %.6fs", metrics.taskInterval.duration)]
        if let transaction = metrics.transactionMetrics.last {
            func span(_ name: String, _ start: Date?, _ end: Date?) {
                if let start, let end { lines.append(String(format: "  %@: %.6fs", name, end.timeIntervalSince(start))) }
            }
            span("DNS", transaction.domainLookupStartDate, transaction.domainLookupEndDate)
            span("Connect", transaction.connectStartDate, transaction.connectEndDate)
            span("TLS", transaction.secureConnectionStartDate, transaction.secureConnectionEndDate)
            span("Waiting", transaction.requestStartDate, transaction.responseStartDate)
            span("Receiving", transaction.responseStartDate, transaction.responseEndDate)
            if transaction.isReusedConnection { lines.append("  (reused connection)") }
        }
        if metrics.redirectCount > 0 { lines.append("  Redirects: \(metrics.redirectCount)") }
        return lines.joined(separator: "\n")
    }

    /// Whether a `Content-Type` is JSON's (`application/json`, `…+json`, `text/json`, `text/javascript`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else {
            return false
        }
        return type == "application/json" || type.hasSuffix("+json") || type == "text/json" || type == "text/javascript"
    }

    /// `HTTP/1.1` or `HTTP/2` from the metrics' protocol name (`http/1.1`, `h2`).
    static func protocolLabel(_ name: String?) -> String {
        switch name?.lowercased() {
        case "h2": "HTTP/2"
        case "http/1.0": "HTTP/1.0"
        default: "HTTP/1.1"
        }
    }

    private func headerLine(_ header: HTTPHeader) -> String {
        style.paint(header.name, .headerName) + ": " + header.value
    }
}
