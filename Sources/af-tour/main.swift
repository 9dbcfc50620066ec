@_spi(WebSocket) import AlamofireNIO
import Foundation
import HTTPBinServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A tour of Alamofire's usage guide (seed 000), run against the bundled HTTPBinServer on
// 127.0.0.1. Each step prints what it really returned. Callback-style examples use the default
// `.main` queue, as the guide does; top-level `await` keeps the main queue running.

func section(_ title: String) { print("\n== \(title)") }
func step(_ title: String, _ result: String) { print("- \(title): \(result)") }

/// Awaits a completion handler delivered on the main queue.
func onMain<T: Sendable>(_ register: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in register { continuation.resume(returning: $0) } }
}

/// The parts of httpbin's echo the tour prints.
struct Echo: Decodable, Sendable {
    let args: [String: String]?
    let form: [String: String]?
    let data: String?
    let headers: [String: String]
    let url: String?
}

func summary(_ result: Result<some Any, AFError>) -> String {
    switch result {
    case .success(let value): "success(\(value))"
    case .failure(let error): "failure(\(error.localizedDescription))"
    }
}

let server = try await HTTPBinServer.start()
let base = server.baseURL.absoluteString
print("HTTPBinServer at \(base)")

section("Making requests")
for method in [HTTPMethod.get, .post, .put, .delete] {
    let status = await onMain { done in
        AF.request("\(base)/\(method.rawValue.lowercased())", method: method).response { done($0.response?.statusCode) }
    }
    step(
        "AF.request(\"/\(method.rawValue.lowercased())\", method: .\(method.rawValue.lowercased()))",
        "status \(status.map(String.init) ?? "none")")
}
let modified = await onMain { done in
    AF.request("\(base)/get", requestModifier: { $0.timeoutInterval = 5 }).response { done($0.request?.timeoutInterval) }
}
step("requestModifier { $0.timeoutInterval = 5 }", "timeoutInterval \(modified ?? 0)")

section("Parameters: URLEncodedFormParameterEncoder")
let foo = ["foo": "bar"]
for (name, request) in [
    ("default encoding", AF.request("\(base)/get", parameters: foo)),
    ("URLEncodedFormParameterEncoder.default", AF.request("\(base)/get", parameters: foo, encoder: URLEncodedFormParameterEncoder.default)),
    (
        ".methodDependent",
        AF.request("\(base)/get", parameters: foo, encoder: URLEncodedFormParameterEncoder(destination: .methodDependent))
    ),
] {
    let url = await onMain { done in request.response { done($0.request?.url?.absoluteString ?? "none") } }
    step(name, url)
}
let arrays: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
let postBody = await onMain { done in
    AF.request("\(base)/post", method: .post, parameters: arrays).response {
        done($0.request?.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
}
step("POST [String: [String]] body", postBody)
let options: [(String, URLEncodedFormEncoder)] = [
    ("alphabetizeKeyValuePairs: false", URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)),
    ("arrayEncoding: .noBrackets", URLEncodedFormEncoder(arrayEncoding: .noBrackets)),
    ("arrayEncoding: .indexInBrackets", URLEncodedFormEncoder(arrayEncoding: .indexInBrackets)),
    ("boolEncoding: .literal", URLEncodedFormEncoder(boolEncoding: .literal)),
    ("keyEncoding: .convertToSnakeCase", URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)),
    ("spaceEncoding: .plusReplaced", URLEncodedFormEncoder(spaceEncoding: .plusReplaced)),
]
struct Sample: Encodable, Sendable {
    let userName = "Jane Doe"
    let tags = ["a", "b"]
    let isAdmin = true
}
for (name, encoder) in options {
    let query: String = (try? encoder.encode(Sample())) ?? "error"
    step(name, query)
}
let dates: String = (try? URLEncodedFormEncoder(dateEncoding: .iso8601).encode(["date": Date(timeIntervalSince1970: 0)])) ?? "error"
step("dateEncoding: .iso8601", dates)
let dataValue: String = (try? URLEncodedFormEncoder(dataEncoding: .base64).encode(["data": Data("hi".utf8)])) ?? "error"
step("dataEncoding: .base64", dataValue)

section("Parameters: JSONParameterEncoder")
for (name, encoder) in [
    ("JSONParameterEncoder.default", JSONParameterEncoder.default), ("JSONParameterEncoder.sortedKeys", JSONParameterEncoder.sortedKeys),
    ("JSONParameterEncoder.prettyPrinted", JSONParameterEncoder.prettyPrinted),
] {
    let body = await onMain { done in
        AF.request("\(base)/post", method: .post, parameters: arrays, encoder: encoder).response {
            done($0.request?.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
    }
    step(name, body.replacingOccurrences(of: "\n", with: "⏎"))
}
let snake = JSONEncoder()
snake.keyEncodingStrategy = .convertToSnakeCase
let snakeBody = try JSONParameterEncoder(encoder: snake).encode(Sample(), into: URLRequest(url: "\(base)/post", method: .post)).httpBody
step("custom JSONEncoder (.convertToSnakeCase)", snakeBody.map { String(decoding: $0, as: UTF8.self) } ?? "")
let manual = try URLEncodedFormParameterEncoder.default.encode(["foo": "bar"], into: URLRequest(url: URL(string: "\(base)/get")!))
step("manual URLRequest encoding", manual.url?.absoluteString ?? "")

section("HTTP headers")
let literalHeaders: HTTPHeaders = ["Authorization": "Basic VXNlcm5hbWU6UGFzc3dvcmQ=", "Accept": "application/json"]
let typedHeaders: HTTPHeaders = [.authorization(username: "Username", password: "Password"), .accept("application/json")]
for (name, headers) in [("dictionary literal", literalHeaders), ("HTTPHeader values", typedHeaders)] {
    let echoed = try await AF.request("\(base)/headers", headers: headers).serializingDecodable(Echo.self).value
    step(name, "server saw Authorization \(echoed.headers["Authorization"] ?? "none"), Accept \(echoed.headers["Accept"] ?? "none")")
}
for header in HTTPHeaders.default { step("default \(header.name)", header.value) }

section("Response validation")
let automatic = await onMain { done in AF.request("\(base)/get").validate().responseJSON { done(summary($0.result.map { _ in "JSON" })) } }
step("validate()", automatic)
let manualValidation = await onMain { done in
    AF.request("\(base)/get").validate(statusCode: 200..<300).validate(contentType: ["application/json"]).responseData { response in
        switch response.result {
        case .success: done("Validation Successful")
        case .failure(let error): done("\(error)")
        }
    }
}
step("validate(statusCode:).validate(contentType:)", manualValidation)
let failed = await onMain { done in
    AF.request("\(base)/status/404").validate().responseData { done($0.error?.localizedDescription ?? "none") }
}
step("validate() on /status/404", failed)

section("Response handling")
let plain = await onMain { done in
    AF.request("\(base)/get").response { done("data \($0.data?.count ?? 0) bytes, status \($0.response?.statusCode ?? 0)") }
}
step("response", plain)
let data = await onMain { done in AF.request("\(base)/get").responseData { done(summary($0.result.map { "\($0.count) bytes" })) } }
step("responseData", data)
let string = await onMain { done in AF.request("\(base)/robots.txt").responseString { done(summary($0.result)) } }
step("responseString", string.replacingOccurrences(of: "\n", with: "⏎"))
let json = await onMain { done in
    AF.request("\(base)/json").responseJSON { response in
        let title = ((response.value as? [String: Any])?["slideshow"] as? [String: Any])?["title"] as? String
        done(title ?? "none")
    }
}
step("responseJSON: slideshow title", json)
let decoded = await onMain { done in
    AF.request("\(base)/get?q=swift").responseDecodable(of: Echo.self) { done(summary($0.result.map { $0.args ?? [:] })) }
}
step("responseDecodable(of:)", decoded)
let chained = await onMain { (done: @escaping @Sendable ([String]) -> Void) in
    let order = OrderLog()
    AF.request("\(base)/get")
        .responseString { _ in order.append("string") }
        .responseDecodable(of: Echo.self) { _ in
            order.append("decodable")
            done(order.entries)
        }
}
step("chained handlers, in order", chained.joined(separator: " → "))
let utility = await onMain { done in
    AF.request("\(base)/get").responseData(queue: .global(qos: .utility)) { _ in
        DispatchQueue.main.async { done("ran on a global utility queue") }
    }
}
step("responseData(queue: .global(qos: .utility))", utility)

section("async/await")
let awaited = try await AF.request("\(base)/get", parameters: ["name": "tour"]).serializingDecodable(Echo.self).value
step("serializingDecodable(Echo.self).value", "args \(awaited.args ?? [:])")
let awaitedString = await AF.request("\(base)/status/418").serializingString().response
step(
    "serializingString().response",
    "status \(awaitedString.response?.statusCode ?? 0): \(awaitedString.value ?? "")".replacingOccurrences(of: "\n", with: ""))

section("Errors")
let invalid = await AF.request("http://[::1").serializingData().response
step("invalid URL", invalid.error?.localizedDescription ?? "none")
let timedOut = await AF.request("\(base)/delay/2") { $0.timeoutInterval = 0.5 }.serializingData().response
step(
    "timeoutInterval 0.5 on /delay/2",
    timedOut.error.map { "\(($0.underlyingError as? URLError)?.code == .timedOut ? "URLError.timedOut" : "\($0)")" } ?? "none")
let cancelled = AF.request("\(base)/delay/2")
let cancelledTask = cancelled.serializingData()
cancelled.cancel()
let cancelledResponse = await cancelledTask.response
step("cancel()", cancelledResponse.error?.isExplicitlyCancelledError == true ? "AFError.explicitlyCancelled" : "unexpected")

section("Downloading data to a file")
let tourDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("af-tour-\(ProcessInfo.processInfo.processIdentifier)")
let (image, imageFile) = await onMain { done in AF.download("\(base)/image/png").responseData { done(($0.value?.count ?? 0, $0.fileURL)) } }
step("download(...).responseData", "\(image) bytes of PNG in the temporary directory")
// Without a destination the file stays where it was downloaded, as Alamofire's does: clean up.
if let imageFile { try? FileManager.default.removeItem(at: imageFile) }
let destination: DownloadRequest.Destination = { _, _ in
    (tourDirectory.appendingPathComponent("images/image.png"), [.removePreviousFile, .createIntermediateDirectories])
}
let saved = await onMain { done in AF.download("\(base)/image/png", to: destination).response { done($0.fileURL?.path ?? "none") } }
step("download(..., to: destination).response", "fileURL \(saved)")
let progressQueue = DispatchQueue(label: "com.alamofire.progressQueue", qos: .utility)
let fractions = OrderLog()
_ = await AF.download("\(base)/bytes/300000", to: { _, _ in (tourDirectory.appendingPathComponent("bytes"), []) })
    .downloadProgress(queue: progressQueue) { fractions.append(String(format: "%.2f", $0.fractionCompleted)) }
    .serializingData().response
await withCheckedContinuation { continuation in progressQueue.async { continuation.resume() } }
step("downloadProgress(queue:) on /bytes/300000", "\(fractions.entries.count) updates, last \(fractions.entries.last ?? "none")")
// Resuming a download: cancel once bytes have arrived, keeping resume data, then continue from it.
let resumeData = await onMain { (done: @escaping @Sendable (Data?) -> Void) in
    let download = AF.download("\(base)/range/200000?chunk_size=2000&duration=1")
    download.downloadProgress { progress in
        if progress.completedUnitCount >= 50_000 { download.cancel { data in done(data) } }
    }
    download.responseData { _ in }
}
let resumed = await AF.download(resumingWith: resumeData ?? Data(), to: { _, _ in (tourDirectory.appendingPathComponent("range"), []) })
    .serializingData().response
step(
    "cancel(byProducingResumeData:) then download(resumingWith:)",
    "\(resumeData?.count ?? 0) bytes of resume data; status \(resumed.response?.statusCode ?? 0), \(resumed.value?.count ?? 0) bytes in all"
)

section("Uploading data to a server")
let uploadedData = try await AF.upload(Data("data".utf8), to: "\(base)/post").serializingDecodable(Echo.self).value
step("upload(Data, to:)", "server got \(uploadedData.data ?? "nothing")")
let videoURL = tourDirectory.appendingPathComponent("video.mov")
try Data(repeating: 7, count: 1_000_000).write(to: videoURL)
let uploadFractions = OrderLog()
let uploadedFile = await onMain { done in
    AF.upload(videoURL, to: "\(base)/upload")
        .uploadProgress { uploadFractions.append(String(format: "%.2f", $0.fractionCompleted)) }
        .responseString { done($0.value ?? "") }
}
step(
    "upload(fileURL, to:) with uploadProgress",
    "\(uploadFractions.entries.count) updates, server says \(uploadedFile.trimmingCharacters(in: .newlines))")
struct FormEcho: Decodable, Sendable {
    let form: [String: String]
    let files: [String: String]
}
let readmeURL = tourDirectory.appendingPathComponent("notes.txt")
try Data("multipart notes".utf8).write(to: readmeURL)
let multipart = try await AF.upload(
    multipartFormData: { multipartFormData in
        multipartFormData.append(Data("one".utf8), withName: "one")
        multipartFormData.append(readmeURL, withName: "notes")
    }, to: "\(base)/post"
).serializingDecodable(FormEcho.self).value
step("upload(multipartFormData:to:)", "form \(multipart.form), files \(multipart.files)")
let throughDisk = try await AF.upload(
    multipartFormData: { $0.append(Data(repeating: 65, count: 2048), withName: "big", fileName: "big.txt", mimeType: "text/plain") },
    to: "\(base)/post", usingThreshold: 1024
).serializingDecodable(FormEcho.self).value
step("a form above usingThreshold goes through a temporary file", "the server parsed \(throughDisk.files["big"]?.count ?? 0) bytes")
let compressed = try await AF.request(
    "\(base)/post", method: .post, parameters: ["compressed": "yes"], encoder: JSONParameterEncoder.default,
    interceptor: .deflateCompressor
).serializingDecodable(Echo.self).value
step(
    "interceptor: .deflateCompressor",
    "Content-Encoding: \(compressed.headers["Content-Encoding"] ?? "none"), the server inflated \(compressed.data ?? "")")
try? FileManager.default.removeItem(at: tourDirectory)

section("Streaming data from a server (DataStreamRequest)")
let streamedBytes = await onMain { done in
    let received = OrderLog()
    AF.streamRequest("\(base)/stream-bytes/100000").responseStream { stream in
        switch stream.event {
        case .stream(let result): if case .success(let data) = result { received.append("\(data.count)") }
        case .complete(let completion):
            done(
                "\(received.entries.compactMap(Int.init).reduce(0, +)) bytes in \(received.entries.count) chunks, error: \(completion.error.map { "\($0)" } ?? "none")"
            )
        }
    }
}
step("responseStream", streamedBytes)
let streamedLines = await onMain { done in
    let lines = OrderLog()
    AF.streamRequest("\(base)/stream/3").responseStreamString { stream in
        if let text = stream.value { lines.append(text) }
        if stream.completion != nil { done(lines.entries.joined().split(separator: "\n").count) }
    }
}
step("responseStreamString", "\(streamedLines) lines")
struct StreamLine: Decodable, Sendable { let id: Int }
let decodedLine = await onMain { done in
    AF.streamRequest("\(base)/stream/1").responseStreamDecodable(of: StreamLine.self) { stream in
        if let line = stream.value { done("id \(line.id)") }
    }
}
step("responseStreamDecodable(of:)", decodedLine)
let cancelledStream = await onMain { done in
    AF.streamRequest("\(base)/drip?duration=10&numbytes=10").responseStream { stream in
        switch stream.event {
        case .stream: stream.cancel()
        case .complete(let completion): done(completion.error?.isExplicitlyCancelledError == true ? "explicitlyCancelled" : "not cancelled")
        }
    }
}
step("stream.cancel() from the handler", cancelledStream)
var asyncChunks = 0
for await stream in AF.streamRequest("\(base)/stream-bytes/50000").streamTask().streamingData() where stream.value != nil {
    asyncChunks += 1
}
step("streamTask().streamingData()", "\(asyncChunks) chunks")
var ticks: [String] = []
for try await event in AF.serverSentEvents("\(base)/sse?count=4&per_connection=2", reconnect: true, reconnectionTime: 0.05) {
    ticks.append("\(event.event)#\(event.id ?? "-")")
    if ticks.count == 4 { break }
}
step("serverSentEvents(reconnect: true), two events per connection", ticks.joined(separator: " "))

section("Authentication")
struct Authenticated: Decodable, Sendable {
    let authenticated: Bool
    let user: String
}
let user = "user"
let password = "password"
let basic = await onMain { done in
    AF.request("\(base)/basic-auth/\(user)/\(password)")
        .authenticate(username: user, password: password)
        .responseDecodable(of: Authenticated.self) { done(summary($0.result.map(\.authenticated))) }
}
step(".authenticate(username:password:) on a Basic challenge", basic)
let credential = URLCredential(user: user, password: password, persistence: .forSession)
let withCredential = await onMain { done in
    AF.request("\(base)/digest-auth/auth/\(user)/\(password)/SHA-256")
        .authenticate(with: credential)
        .responseDecodable(of: Authenticated.self) {
            done("\(summary($0.result.map(\.authenticated))), \($0.metrics?.transactionMetrics.count ?? 0) exchanges")
        }
}
step(".authenticate(with: URLCredential) on a Digest SHA-256 challenge", withCredential)
let wrong = await AF.request("\(base)/basic-auth/\(user)/\(password)").authenticate(username: user, password: "wrong")
    .validate().serializingData().response
step(
    "a wrong password",
    "tried once, then \(wrong.response?.statusCode ?? 0): \(wrong.error?.localizedDescription ?? "no error")")
let manualAuthorization = await AF.request(
    "\(base)/basic-auth/\(user)/\(password)", headers: [.authorization(username: user, password: password)]
)
.serializingDecodable(Authenticated.self).response
step(
    "headers: [.authorization(username:password:)]",
    "\(summary(manualAuthorization.result.map(\.authenticated))), \(manualAuthorization.metrics?.transactionMetrics.count ?? 0) exchange")

section("Cookies")
struct CookieJar: Decodable, Sendable { let cookies: [String: String] }
// A session of its own: `AF` uses the shared HTTPCookieStorage, which would then send these
// cookies with every later request of the tour.
let cookieSession = Session(configuration: URLSessionConfiguration.af.ephemeral)
let setOnRedirect = try await cookieSession.request("\(base)/cookies/set?flavour=oatmeal&count=3")
    .serializingDecodable(CookieJar.self).value
step(
    "Set-Cookie on a 302, sent on the hop it leads to",
    setOnRedirect.cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
let stored = cookieSession.sessionConfiguration.httpCookieStorage?.cookies?.map { "\($0.name) (domain \($0.domain), path \($0.path))" }
step("httpCookieStorage", (stored ?? []).sorted().joined(separator: ", "))
let afterDelete = try await cookieSession.request("\(base)/cookies/delete?flavour").serializingDecodable(CookieJar.self).value
step("an expired Set-Cookie deletes", "\(afterDelete.cookies)")

section("Caching")
// A URLCache of the tour's own, so that the tour's requests elsewhere are not answered from it.
let cacheConfiguration = URLSessionConfiguration.af.default
cacheConfiguration.urlCache = URLCache(memoryCapacity: 4 * 1024 * 1024, diskCapacity: 0, diskPath: nil)
let caching = Session(configuration: cacheConfiguration)
func fetchType(_ response: AFDataResponse<Data>) -> String {
    switch response.metrics?.transactionMetrics.last?.resourceFetchType {
    case .localCache?: "from the cache"
    case .networkLoad?:
        "from the network (\((response.metrics?.transactionMetrics.last?.response as? HTTPURLResponse)?.statusCode ?? 0) on the wire)"
    default: "unknown"
    }
}
for attempt in ["first", "second"] {
    let cached = await caching.request("\(base)/cache/60").serializingData().response
    step("\(attempt) GET /cache/60 (max-age=60)", fetchType(cached))
}
for attempt in ["first", "second"] {
    let revalidated = await caching.request("\(base)/etag/tour").serializingData().response
    step("\(attempt) GET /etag/tour", "\(revalidated.response?.statusCode ?? 0), \(fetchType(revalidated))")
}
let cacher = ResponseCacher(
    behavior: .modify { _, response in
        CachedURLResponse(response: response.response, data: response.data, userInfo: ["tour": "modified"], storagePolicy: .allowed)
    })
_ = await caching.request("\(base)/cache/30").cacheResponse(using: cacher).serializingData().response
let storedEntry = cacheConfiguration.urlCache?.cachedResponse(for: URLRequest(url: URL(string: "\(base)/cache/30")!))
step(".cacheResponse(using: ResponseCacher(behavior: .modify { … }))", "stored with userInfo \(storedEntry?.userInfo?["tour"] ?? "none")")
let offline = await caching.request("\(base)/uuid") { $0.cachePolicy = .returnCacheDataDontLoad }.serializingData().response
step("cachePolicy = .returnCacheDataDontLoad, nothing stored", offline.error?.localizedDescription ?? "no error")
cacheConfiguration.urlCache?.removeAllCachedResponses()
step(
    "urlCache.removeAllCachedResponses(), then GET /cache/60",
    fetchType(await caching.request("\(base)/cache/60").serializingData().response))

section("Redirects")
let notFollowed = await AF.request("\(base)/redirect/2").redirect(using: Redirector.doNotFollow).serializingData().response
step(
    ".redirect(using: Redirector.doNotFollow)",
    "\(notFollowed.response?.statusCode ?? 0) to \(notFollowed.response?.value(forHTTPHeaderField: "Location") ?? "nowhere")")
let modifiedRedirect = await AF.request("\(base)/redirect-to?url=/get")
    .redirect(
        using: Redirector(
            behavior: .modify { _, request, _ in
                var request = request
                request.setValue("redirected", forHTTPHeaderField: "X-Tour")
                return request
            })
    )
    .serializingDecodable(Echo.self).response
step(
    ".redirect(using: Redirector(behavior: .modify { … }))",
    "the next hop sent X-Tour: \(modifiedRedirect.value?.headers["X-Tour"] ?? "none")")

section("Metrics")
let measured = await AF.request("\(base)/get").serializingData().response
if let transaction = measured.metrics?.transactionMetrics.first {
    step(
        "response.metrics",
        "\(measured.metrics?.transactionMetrics.count ?? 0) transaction, reused connection \(transaction.isReusedConnection), "
            + "\(transaction.countOfResponseBodyBytesReceived) body bytes in \(String(format: "%.1f", (measured.metrics?.taskInterval.duration ?? 0) * 1000)) ms"
    )
}

section("Proxies")
// The bundled test proxy on loopback, named the way URLSession's configuration names proxies; the
// environment (`http_proxy`, `https_proxy`, `no_proxy`) is read the same way when there is no dictionary.
let proxy = try await ProxyServer.start()
let proxied = URLSessionConfiguration.af.default
proxied.connectionProxyDictionary = ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
let proxiedSession = Session(configuration: proxied)
let throughProxy = await proxiedSession.request("\(base)/get").validate().serializingData().response
step(
    "connectionProxyDictionary",
    "\(summary(throughProxy.result)); isProxyConnection \(throughProxy.metrics?.transactionMetrics.last?.isProxyConnection ?? false), "
        + "the proxy forwarded \(proxy.statistics.forwardedRequests.count) request")
try await proxy.shutdown()

section("WebSockets (Alamofire's @_spi(WebSocket) API)")
// The bundled WebSocket server on loopback: its echo endpoint sends every message back.
let webSockets = try await WebSocketTestServer.start()
let socketTask = AF.webSocketRequest(to: webSockets.url("echo")).webSocketTask()
for await event in socketTask.streamingMessageEvents() {
    switch event.kind {
    case .connected(let chosen):
        step(".connected", "subprotocol \(chosen ?? "none")")
        try await socketTask.send(.string("Hello, WebSocket"))
    case .receivedMessage(.string(let text)):
        step(".receivedMessage", text)
        socketTask.close(sending: .normalClosure)
    case .disconnected(let code, _):
        step(".disconnected", "close code \(code.rawValue)")
    case .completed(let completion):
        step(".completed", "response \(completion.response?.statusCode ?? 0), error \(completion.error.map { "\($0)" } ?? "none")")
    default:
        break
    }
}
try await webSockets.shutdown()

section("Descriptions")
let described = AF.request("\(base)/post", method: .post, parameters: ["a": "b"], encoder: JSONParameterEncoder.default)
let response = await described.serializingData().response
step("request.description", described.description)
print(described.cURLDescription())
print(response.debugDescription.split(separator: "\n").prefix(3).joined(separator: "\n"))

section("Lifecycle hooks (Alamofire 5.11 and 5.12)")
let events = OrderLog()
let monitor = ClosureEventMonitor(queue: progressQueue)
monitor.requestDidResume = { _ in events.append("requestDidResume") }
monitor.requestDidCreateTask = { _, task in events.append("didCreateTask #\(task.taskIdentifier)") }
monitor.taskWillPerformHTTPRedirection = { _, _, response, _ in events.append("willPerformHTTPRedirection \(response.statusCode)") }
monitor.dataTaskDidReceiveResponse = { _, _, response in events.append("didReceive \((response as? HTTPURLResponse)?.statusCode ?? 0)") }
monitor.requestDidGatherMetrics = { _, metrics in events.append("didGatherMetrics (\(metrics.transactionMetrics.count) transactions)") }
monitor.requestDidFinish = { _ in events.append("requestDidFinish") }
let hooked = Session(eventMonitors: [monitor])
let created = OrderLog()
let hookedRequest = hooked.request("\(base)/redirect/1", shouldAutomaticallyResume: false)
    .adapt(
        using: Adapter { request, _, completion in
            var request = request
            request.headers.add(name: "X-Tour", value: "adapted")
            completion(.success(request))
        }
    )
    .onURLRequestCreation(on: progressQueue) { created.append("URLRequest for \($0.url?.path ?? "")") }
    .onHTTPResponse(on: progressQueue) { response in created.append("onHTTPResponse \(response.statusCode)") }
    .redirect(using: Redirector.follow)
step(
    "shouldAutomaticallyResume: false",
    "state \(hookedRequest.state) until resume(); task \(hookedRequest.task == nil ? "not made yet" : "made")")
let hookedTask = hookedRequest.serializingDecodable(Echo.self)
hookedRequest.resume()
let hookedEcho = try await hookedTask.value
await withCheckedContinuation { continuation in progressQueue.async { continuation.resume() } }
step("adapt(using:) on one request", "server saw X-Tour: \(hookedEcho.headers["X-Tour"] ?? "none")")
step("onURLRequestCreation, onHTTPResponse", created.entries.joined(separator: " → "))
step("ClosureEventMonitor", events.entries.joined(separator: " → "))
step(
    "request.task",
    "\(hookedRequest.task is URLSessionDataTask ? "a URLSessionDataTask" : "another task"), state \(hookedRequest.task?.state == .completed ? "completed" : "running"), "
        + "\(hookedRequest.task?.countOfBytesReceived ?? 0) bytes received")
let refused = await AF.request("\(base)/bytes/100000").onHTTPResponse { _ async -> Request.ResponseDisposition in .cancel }
    .serializingData().response
step(
    "onHTTPResponse { .cancel }",
    refused.error?.isExplicitlyCancelledError == true ? "AFError.explicitlyCancelled, body not read" : "unexpected")
/// The statuses a request's `httpResponses()` stream yields. A stream starts when it is iterated:
/// start it, then the request.
func streamedStatuses(_ request: DataRequest) async -> [Int] {
    var responses = request.httpResponses().makeAsyncIterator()
    _ = request.serializingData()
    request.resume()
    var statuses: [Int] = []
    while let response = await responses.next() { statuses.append(response.statusCode) }
    return statuses
}
let statuses = await streamedStatuses(AF.request("\(base)/get", shouldAutomaticallyResume: false))
step("request.httpResponses(), iterated", statuses.map(String.init).joined(separator: ", "))
let local = try await AF.request("data:text/plain;base64,SGVsbG8sIHRvdXIh").serializingString().value
step("AF.request(\"data:…\")", local)

try await server.shutdown()
print("\nTour complete.")

/// Records handler order from any queue.
final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ entry: String) { lock.withLock { storage.append(entry) } }
    var entries: [String] { lock.withLock { storage } }
}
