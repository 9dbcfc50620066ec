import AFSynchronization
import AlamofireNIO
import ArgumentParser
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One `af` request: the `Session` its options call for, the `URLRequest` its plan describes, and
/// the printing of what comes back. ``run()`` returns the exit status.
struct Exchange: Sendable {
    let options: AFCommand.Options
    let plan: RequestPlan
    let session: Session
    let urlRequest: URLRequest
    let printer: ExchangePrinter
    /// Whether the redirect limit stopped the request.
    let redirects: RedirectCount

    /// Counts the redirects followed, and remembers whether the limit refused one.
    final class RedirectCount: Sendable {
        private let state = Mutex((followed: 0, refused: false))
        var refused: Bool { state.withLock { $0.refused } }

        /// Whether one more redirect is within `limit`; counts it if so.
        func follow(limit: Int) -> Bool {
            state.withLock { state in
                guard state.followed < limit else {
                    state.refused = true
                    return false
                }
                state.followed += 1
                return true
            }
        }
    }

    init(command: AFCommand, plan: RequestPlan) throws {
        let options = command.options
        self.options = options
        self.plan = plan
        let redirects = RedirectCount()
        self.redirects = redirects
        let formats = options.pretty == .all || options.pretty == .format
        let colors = (options.pretty == .all || options.pretty == .colors) ? OutputStyle.colored : .plain
        printer = ExchangePrinter(style: colors, formatsBodies: formats)

        let configuration = URLSessionConfiguration.af.default
        var defaults = configuration.headers
        // `af/1.0.0 AlamofireNIO/x.y.z`, as HTTPie names itself, instead of a bundle's name.
        let library = defaults.value(for: "User-Agent")?.split(separator: " ").last.map(String.init) ?? "AlamofireNIO"
        defaults.update(.userAgent("af/\(AFCommand.configuration.version) \(library)"))
        for name in plan.removedHeaders { defaults.remove(name: name) }
        configuration.headers = defaults
        if let timeout = options.timeout { configuration.timeoutIntervalForRequest = timeout }
        if !options.proxies.isEmpty { configuration.connectionProxyDictionary = Self.proxyDictionary(options.proxies) }

        var trustManager: ServerTrustManager?
        var trustRoots: [SecCertificate] = []
        switch options.verify.lowercased() {
        case "yes", "true": break
        case "no", "false": trustManager = EveryHostTrustManager(evaluator: DisabledTrustEvaluator())
        default: trustRoots += try Self.certificates(options.verify)
        }
        if let ca = options.ca { trustRoots += try Self.certificates(ca) }
        let identity = try options.cert.map { try Self.identity(certificate: $0, key: options.certKey, password: options.certKeyPass) }
        let maximum = options.maxRedirects
        let redirectHandler =
            options.follow
            ? Redirector(behavior: .modify { _, request, _ in redirects.follow(limit: maximum) ? request : nil }) : Redirector.doNotFollow
        session = Session(
            configuration: configuration, serverTrustManager: trustManager, redirectHandler: redirectHandler,
            additionalTrustRoots: trustRoots, clientIdentity: identity)
        urlRequest = try Self.urlRequest(for: plan, bearer: options.bearer)
    }

    /// Sends the request in the mode the options ask for and returns the exit status.
    func run() async -> Int32 {
        if options.download { return await runDownload() }
        if options.stream { return await runStream() }
        return await runData()
    }

    // MARK: - Plain requests

    private func runData() async -> Int32 {
        let request: DataRequest
        if case .multipart(let fields, let files) = plan.body {
            request = session.upload(
                multipartFormData: { form in
                    for field in fields { form.append(Data(field.value.utf8), withName: field.name) }
                    for file in files {
                        let url = URL(fileURLWithPath: file.value)
                        form.append(url, withName: file.name, fileName: url.lastPathComponent, mimeType: Self.mimeType(of: url))
                    }
                }, with: urlRequest)
        } else {
            request = session.request(urlRequest)
        }
        authenticate(request)
        let response = await withCheckedContinuation { continuation in
            request.response(queue: .global()) { continuation.resume(returning: $0) }
        }
        if options.verbose { Terminal.out(request.cURLDescription() + "\n\n") }
        printRequest(request.request ?? urlRequest, protocolName: response.metrics?.transactionMetrics.last?.networkProtocolName)
        if let error = response.error { return fail(error) }
        guard let http = response.response else { return fail(.sessionTaskFailed(error: URLError(.badServerResponse))) }
        guard printResponse(http, body: response.data ?? Data(), metrics: response.metrics) else { return 1 }
        return status(of: http)
    }

    // MARK: - Streams

    private func runStream() async -> Int32 {
        let request = session.streamRequest(urlRequest)
        authenticate(request)
        let writer = StreamWriter(exchange: self)
        let completion = await withCheckedContinuation { (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
            // One serial queue: chunks are written, and events parsed, in the order they came.
            request.responseStream(on: DispatchQueue(label: "af.stream")) { stream in
                switch stream.event {
                case .stream(.success(let chunk)): writer.write(chunk, response: request.response)
                case .complete(let completion):
                    writer.finish(response: completion.response)
                    continuation.resume(returning: completion)
                }
            }
        }
        if let error = completion.error { return fail(error) }
        guard let http = completion.response else { return fail(.sessionTaskFailed(error: URLError(.badServerResponse))) }
        if options.parts.contains(.metadata) { Terminal.out("\n" + printer.metadata(completion.metrics) + "\n") }
        return status(of: http)
    }

    // MARK: - Printing

    /// Prints the request's head and body if asked.
    func printRequest(_ request: URLRequest, protocolName: String?) {
        var sections: [String] = []
        if options.parts.contains(.requestHeaders) {
            sections.append(printer.requestHead(request, defaults: session.sessionConfiguration.headers, protocolName: protocolName))
        }
        if options.parts.contains(.requestBody) {
            switch plan.body {
            case .none: break
            case .json(let value): sections.append(printer.formatsBodies ? value.prettyPrinted(style: printer.style) : value.serialized)
            case .form: sections.append(request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? "")
            case .multipart(let fields, let files):
                sections.append(
                    (fields.map { "\($0.name)=\($0.value)" } + files.map { "\($0.name)@\($0.value)" }).joined(separator: "\n")
                        + "\n(sent as multipart/form-data)")
            }
        }
        if !sections.isEmpty { Terminal.out(sections.joined(separator: "\n\n") + "\n\n") }
    }

    /// Prints the response's head, body and timing as asked; `-o` without `--download` sends the
    /// body to that file instead. Returns false when that file cannot be written.
    private func printResponse(_ response: HTTPURLResponse, body: Data, metrics: TaskMetrics?) -> Bool {
        let protocolName = metrics?.transactionMetrics.last?.networkProtocolName
        if options.parts.contains(.responseHeaders) {
            Terminal.out(printer.responseHead(response, protocolName: protocolName) + "\n\n")
        }
        if let output = options.output {
            do { try body.write(to: URL(fileURLWithPath: output)) } catch {
                Terminal.error("af: error: cannot write \(output): \(error.localizedDescription)")
                return false
            }
        } else if options.parts.contains(.responseBody), !body.isEmpty {
            let toTerminal = Terminal.isTerminal(STDOUT_FILENO)
            if options.pretty == .none, !toTerminal {
                Terminal.out(body)
            } else if let text = printer.body(body, contentType: response.value(forHTTPHeaderField: "Content-Type"), toTerminal: toTerminal)
            {
                Terminal.out(text.hasSuffix("\n") ? text : text + "\n")
            } else {
                Terminal.out(body)
            }
        }
        if options.parts.contains(.metadata) { Terminal.out("\n" + printer.metadata(metrics) + "\n") }
        return true
    }

    /// A file part's type from its extension, `application/octet-stream` when unknown.
    static func mimeType(of file: URL) -> String {
        let types = [
            "json": "application/json", "txt": "text/plain", "html": "text/html", "csv": "text/csv", "xml": "application/xml",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "pdf": "application/pdf",
        ]
        return types[file.pathExtension.lowercased()] ?? "application/octet-stream"
    }

    // MARK: - Outcomes

    /// Reports `error` and returns its exit status: 2 for a timeout, 6 after too many redirects, else 1.
    func fail(_ error: AFError) -> Int32 {
        if case .sessionTaskFailed(let underlying as URLError) = error, underlying.code == .timedOut {
            Terminal.error("af: error: Request timed out (\(options.timeout.map { String(format: "%gs", $0) } ?? "the default limit")).")
            return 2
        }
        Terminal.error("af: error: \(error.localizedDescription)")
        return 1
    }

    /// The exit status of a response: 6 when the redirect limit stopped it; with `--check-status`
    /// (or a download) 3, 4 or 5 for a 3xx, 4xx or 5xx, with a warning.
    func status(of response: HTTPURLResponse, checking: Bool? = nil) -> Int32 {
        if redirects.refused {
            Terminal.error("af: error: Too many redirects (--max-redirects=\(options.maxRedirects)).")
            return 6
        }
        let code = response.statusCode
        guard checking ?? options.checkStatus, (300..<600).contains(code) else { return 0 }
        Terminal.error("af: warning: HTTP \(code) \(reasonPhrase(code))")
        return Int32(code / 100)
    }

    /// Adds `--auth`'s credential: answered with Basic or Digest when the server challenges.
    func authenticate(_ request: Request) {
        guard let auth = options.auth, let colon = auth.firstIndex(of: ":") else { return }
        request.authenticate(username: String(auth[..<colon]), password: String(auth[auth.index(after: colon)...]))
    }
}
