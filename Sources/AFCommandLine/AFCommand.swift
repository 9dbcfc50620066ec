import AlamofireNIO
public import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `af`: an HTTPie-style command-line HTTP client on AlamofireNIO.
///
/// `af [METHOD] URL [ITEM…]` sends one request and prints the response: its status line and
/// headers (in colour on a terminal) and its body (JSON indented and coloured). ``RequestPlan``
/// reads the arguments; ``Exchange`` sends the request through a `Session` built from the options.
///
/// Exit status, as HTTPie's: 0 on success, 1 on an error, 2 when the request timed out, 6 after
/// too many redirects, and with `--check-status` 3, 4 or 5 for a 3xx, 4xx or 5xx response.
public struct AFCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "af",
        abstract: "A command-line HTTP client, on AlamofireNIO, with HTTPie's syntax.",
        discussion: """
            Items after the URL:
              Header:value    a header (Header: removes one af would send, Header; sends it empty)
              name==value     a query parameter
              field=value     a JSON string field (a form field with --form)
              field:=json     a raw JSON field (count:=3, tags:='["a","b"]')
              field@path      a file, sent in a multipart form
              field=@path     a field whose text is read from a file (field:=@path for JSON)

            Examples:
              af :8080/get name==value
              af POST example.org/post name=Ada age:=36 Accept:application/json
              af --form --check-status example.org/post file@photo.png
              af --download -o big.bin example.org/bytes/1000000
            """,
        version: "1.0.0"
    )

    /// `--pretty`'s choices.
    public enum Pretty: String, ExpressibleByArgument, CaseIterable, Sendable {
        case all, colors, format, none
    }

    @Argument(help: "[METHOD] URL [ITEM...]")
    var arguments: [String] = []

    @Flag(name: [.customShort("f"), .long], help: "Send fields as a URL-encoded form (a multipart form when a file is attached).")
    var form = false

    @Flag(help: "Send fields as a multipart form even without a file.")
    var multipart = false

    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: "What to print: H request headers, B request body, h response headers, b response body, m timing.")
    var printedParts: String?

    @Flag(name: .customLong("headers"), help: "Print only the response's headers (--print=h).")
    var headersOnly = false

    @Flag(name: [.customShort("b"), .customLong("body")], help: "Print only the response's body (--print=b).")
    var bodyOnly = false

    @Flag(name: [.customShort("v"), .long], help: "Print the request as a cURL command and as sent, the response, and the timing.")
    var verbose = false

    @Option(help: "Colours and formatting: all, colors, format or none. all on a terminal, none when piped.")
    var pretty: Pretty?

    @Flag(name: [.customShort("d"), .long], help: "Save the body to a file, with a progress bar on a terminal.")
    var download = false

    @Option(name: [.customShort("o"), .long], help: "The file to save to (with --download) or write the body to.")
    var output: String?

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "With --download and --output, continue a partial file with a Range request.")
    var resume = false

    @Flag(name: [.customShort("S"), .long], help: "Print the body as it arrives; Server-Sent Events as events.")
    var stream = false

    @Option(name: [.customShort("a"), .long], help: "USER:PASSWORD, answered with Basic or Digest as the server asks.")
    var auth: String?

    @Option(help: "A bearer token, sent in the Authorization header.")
    var bearer: String?

    @Option(help: "Seconds to wait for the server before giving up.")
    var timeout: Double?

    @Flag(name: [.customShort("F"), .long], help: "Follow redirects.")
    var follow = false

    @Option(name: .customLong("max-redirects"), help: "The most redirects to follow.")
    var maxRedirects = 30

    @Option(help: "yes to verify the server's certificate, no to skip it, or a CA bundle to verify it against.")
    var verify = "yes"

    @Option(help: "A PEM file of certificate authorities to trust besides the system's.")
    var ca: String?

    @Option(help: "A client certificate: PEM (with its key, or the key in --cert-key), or PKCS#12 (.p12, .pfx).")
    var cert: String?

    @Option(name: .customLong("cert-key"), help: "The client certificate's private key (PEM).")
    var certKey: String?

    @Option(name: .customLong("cert-key-pass"), help: "The password of a PKCS#12 client certificate.")
    var certKeyPass: String?

    @Option(help: "PROTOCOL:URL, a proxy for http or https requests (http:http://proxy:3128); socks5 URLs too.")
    var proxy: [String] = []

    @Flag(name: .customLong("check-status"), help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    public init() {}

    public func validate() throws {
        guard !arguments.isEmpty else { throw ValidationError("Give a URL.") }
        if resume, output == nil || !download { throw ValidationError("--continue needs --download and --output.") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be more than 0.") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must be 0 or more.") }
        if download, stream { throw ValidationError("--download and --stream do not go together.") }
        if let printedParts { _ = try PrintedParts(letters: printedParts) }
        if let auth, !auth.contains(":") { throw ValidationError("--auth takes USER:PASSWORD.") }
        for proxy in proxy where Self.proxyEntry(proxy) == nil {
            throw ValidationError("--proxy takes PROTOCOL:URL, such as http:http://127.0.0.1:3128: \(proxy)")
        }
    }

    public func run() async throws {
        let plan: RequestPlan
        do {
            plan = try RequestPlan(arguments: arguments, form: form, multipart: multipart)
        } catch {
            Terminal.error("af: error: \(error)")
            throw ExitCode(1)
        }
        let exchange: Exchange
        do {
            exchange = try Exchange(command: self, plan: plan)
        } catch {
            Terminal.error("af: error: \(error)")
            throw ExitCode(1)
        }
        let status = await exchange.run()
        if status != 0 { throw ExitCode(status) }
    }

    /// What is printed: `--print`, `--headers`, `--body` or `--verbose`, else the response's
    /// headers and body on a terminal and only its body when piped (and, downloading, the headers).
    var parts: PrintedParts {
        if let printedParts, let parts = try? PrintedParts(letters: printedParts) { return parts }
        if verbose { return [.requestHeaders, .requestBody, .responseHeaders, .responseBody, .metadata] }
        if headersOnly { return .responseHeaders }
        if bodyOnly { return .responseBody }
        if download { return .responseHeaders }
        return Terminal.isTerminal(STDOUT_FILENO) ? [.responseHeaders, .responseBody] : .responseBody
    }

    /// Colours and formatting, from `--pretty` or the terminal.
    var prettiness: Pretty {
        pretty ?? (Terminal.isTerminal(STDOUT_FILENO) ? .all : .none)
    }

    /// The proxy a `--proxy` value names: the scheme it is for and the proxy's URL.
    static func proxyEntry(_ value: String) -> (scheme: String, url: URL)? {
        let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["http", "https"].contains(parts[0].lowercased()), let url = URL(string: parts[1]), url.host != nil,
            ["http", "socks5", "socks5h"].contains(url.scheme?.lowercased() ?? "")
        else { return nil }
        return (parts[0].lowercased(), url)
    }

    // Stored options read by Exchange.
    var options: Options {
        Options(
            download: download, output: output, resume: resume, stream: stream, verbose: verbose, auth: auth, bearer: bearer,
            timeout: timeout,
            follow: follow, maxRedirects: maxRedirects, verify: verify, ca: ca, cert: cert, certKey: certKey,
            certKeyPass: certKeyPass, proxies: proxy.compactMap(Self.proxyEntry), checkStatus: checkStatus, parts: parts,
            pretty: prettiness)
    }

    /// The options as one value, for ``Exchange``.
    struct Options: Sendable {
        var download: Bool
        var output: String?
        var resume: Bool
        var stream: Bool
        var verbose: Bool
        var auth: String?
        var bearer: String?
        var timeout: Double?
        var follow: Bool
        var maxRedirects: Int
        var verify: String
        var ca: String?
        var cert: String?
        var certKey: String?
        var certKeyPass: String?
        var proxies: [(scheme: String, url: URL)]
        var checkStatus: Bool
        var parts: PrintedParts
        var pretty: Pretty
    }
}

/// Standard output and error, written unbuffered.
enum Terminal {
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    static func out(_ data: Data) { FileHandle.standardOutput.write(data) }
    static func out(_ text: String) { out(Data(text.utf8)) }
    static func error(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    static func errorText(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}
