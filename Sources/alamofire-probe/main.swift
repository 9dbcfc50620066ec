@_spi(WebSocket) import AlamofireNIO
import CMallocStatistics
import ChildProcess
import Foundation
import HTTPBinServer

/// `alamofire-probe soak URL COUNT`, `alamofire-probe soak-tls URL CA_FILE COUNT`
///
/// Makes COUNT sequential GETs of URL through a `Session`, as `AF.request(url).validate().responseData` users
/// do, and prints `requests=<n> failures=<n> rss_kb_warm=<VmRSS after the first half> rss_kb_end=<VmRSS
/// at the end> heap_kb_warm=<the C allocator's bytes in use after the first half> heap_kb_end=<at the
/// end>`. The tests run it as a process of its own, so that memory it keeps per request shows as
/// growth between the two readings: to the byte in the allocator's count, rounded to pages and
/// blurred by fragmentation in resident memory. `soak URL COUNT LEAK_BYTES` leaks that many bytes
/// per request on purpose, to show that a leak is seen.
func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

/// The C allocator's bytes in use, in kB: what a leak adds to, without resident memory's page
/// rounding and fragmentation.
func heapKilobytes() -> Int { c_malloc_bytes_in_use() / 1024 }

/// Peak resident memory so far (VmHWM), in kB.
func peakResidentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

/// A field of /proc/self/status (`Threads`, say), as a number.
func statusField(_ name: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("\(name):") } ?? ""
    return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
}

/// How many file descriptors the process has open.
func openFileDescriptors() -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    if ProcessInfo.processInfo.environment["PROBE_LIST_FDS"] != nil {
        let targets = descriptors.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "?" }
        FileHandle.standardError.write(Data("fds: \(targets.sorted())\n".utf8))
    }
    return descriptors.count
}

enum ProbeError: Error { case usage }

/// `alamofire-probe get URL`: one GET through a default `Session`, whose proxies come from this
/// process's environment; prints `status=<code or error> proxy=<true|false>`.
func get(url: URL) async -> String {
    // Kept for the whole request: a released Session finishes its requests, as in Alamofire.
    let session = Session(eventMonitors: [])
    defer { withExtendedLifetime(session) {} }
    let response = await session.request(url).serializingData().response
    let status = response.response.map { String($0.statusCode) } ?? "error"
    let viaProxy = response.metrics?.transactionMetrics.last?.isProxyConnection ?? false
    return "status=\(status) proxy=\(viaProxy)"
}

/// `alamofire-probe stream PATH`: streams PATH of an HTTPBinServer it starts itself (so the load
/// of serving stays out of the test process) through `streamRequest`, with a consumer that takes
/// each chunk more slowly than loopback delivers it, and prints `bytes=<n> error=<none|failed>
/// rss_kb_peak=<VmHWM>`: back-pressure must keep the peak flat whatever the size.
func stream(path: String) async throws -> String {
    let server = try await HTTPBinServer.start()
    let url = server.url(path)
    var bytes = 0
    var error = "none"
    let session = Session()
    defer { withExtendedLifetime(session) {} }
    for await event in session.streamRequest(url).streamTask().streamingData() {
        switch event.event {
        case .stream(.success(let chunk)):
            bytes += chunk.count
            // Slower than the network: 100 MB/s at most.
            try? await Task.sleep(for: .microseconds(chunk.count / 100))
        case .complete(let completion):
            if completion.error != nil { error = "failed" }
        }
    }
    let peak = peakResidentKilobytes()
    try? await server.shutdown()
    return "bytes=\(bytes) error=\(error) rss_kb_peak=\(peak)"
}

/// `alamofire-probe lying-length`: a `HEAD` and then a `GET` of a path whose server announces a
/// 4 GB body and sends 10 bytes, against an HTTPBinServer the probe starts; prints
/// `head=<status|error> get=<error code|status> vm_kb_growth=<VmPeak after - VmPeak before>`. The
/// client's memory must follow the bytes that arrived: reserving what was announced would show as
/// gigabytes of address space (untouched pages would not show as resident, so the probe reads the
/// virtual peak). A request to another path first starts the threads and their malloc arenas, whose
/// reservations grow with the machine's cores, so that only the lying response's share is counted.
func lyingLength() async throws -> String {
    let server = try await HTTPBinServer.start()
    let session = Session()
    defer { withExtendedLifetime(session) {} }
    let url = server.faultURL("/lying-length")
    func outcome(_ response: AFDataResponse<Data>) -> String {
        switch response.result {
        case .success: "\(response.response?.statusCode ?? -1)"
        case .failure(let error): "\((error.underlyingError as? URLError)?.code.rawValue ?? 0)"
        }
    }
    _ = await session.request(server.url("/bytes/100000")).serializingData().response
    let before = statusField("VmPeak")
    let head = await session.request(url, method: .head).serializingData().response
    let get = await session.request(url).serializingData().response
    let growth = statusField("VmPeak") - before
    try? await server.shutdown()
    return "head=\(outcome(head)) get=\(outcome(get)) vm_kb_growth=\(growth)"
}

/// `alamofire-probe websocket-stream COUNT SIZE`: receives COUNT binary messages of SIZE bytes from a
/// `WebSocketTestServer` it starts itself, through a `WebSocketTask` whose consumer takes each more
/// slowly than loopback delivers it, and prints `messages=<n> bytes=<n> error=<none|failed>
/// rss_kb_peak=<VmHWM>`: back-pressure must keep the peak flat whatever the total.
func webSocketStream(count: Int, size: Int) async throws -> String {
    let server = try await WebSocketTestServer.start()
    let session = Session(eventMonitors: [])
    defer { withExtendedLifetime(session) {} }
    let task = session.webSocketRequest(to: server.url("stream", query: "count=\(count)&size=\(size)")).webSocketTask()
    var (messages, bytes, error) = (0, 0, "none")
    for await event in task.streamingMessageEvents() {
        switch event.kind {
        case .receivedMessage(.data(let data)):
            messages += 1
            bytes += data.count
            // Slower than the network: 100 MB/s at most.
            try? await Task.sleep(for: .microseconds(data.count / 100))
        case .completed(let completion):
            if completion.error != nil { error = "failed" }
        default:
            break
        }
    }
    let peak = peakResidentKilobytes()
    try? await server.shutdown()
    return "messages=\(messages) bytes=\(bytes) error=\(error) rss_kb_peak=\(peak)"
}

/// `alamofire-probe sessions URL COUNT`: makes COUNT sessions one after another, each with its own
/// transport, connections and URLSession, makes one GET of URL through each and releases it, and
/// prints `sessions=<n> failures=<n>` with the file descriptors, threads and resident memory after
/// the first tenth and at the end: what a session holds must go with it.
func sessions(url: URL, count: Int) async -> String {
    let warmUp = max(1, count / 10)
    var failures = 0
    var warm = (fds: -1, threads: -1, rss: -1)
    for index in 0..<count {
        if index == warmUp { warm = (openFileDescriptors(), statusField("Threads"), residentKilobytes()) }
        let session = Session(eventMonitors: [])
        let response = await session.request(url).validate().serializingData().response
        if response.error != nil { failures += 1 }
        withExtendedLifetime(session) {}
    }
    // Released connections close on their event loops: let them.
    try? await Task.sleep(for: .milliseconds(500))
    return "sessions=\(count) failures=\(failures) fds_warm=\(warm.fds) fds_end=\(openFileDescriptors()) "
        + "threads_warm=\(warm.threads) threads_end=\(statusField("Threads")) rss_kb_warm=\(warm.rss) rss_kb_end=\(residentKilobytes())"
}

/// `alamofire-probe inflight URL COUNT`: starts COUNT GETs of URL at once through one session
/// (whose per-host connection limit queues most of them), waits for all, releases the session, and
/// prints `requests=<n> failures=<n>` with the file descriptors before, at the peak and after.
func inFlight(url: URL, count: Int) async -> String {
    // The process-wide pieces a first session brings (NIO's event loops, Dispatch's) are not the session's.
    let first = Session(eventMonitors: [])
    _ = await first.request(url).serializingData().response
    withExtendedLifetime(first) {}
    try? await Task.sleep(for: .milliseconds(200))
    let before = openFileDescriptors()
    let configuration = URLSessionConfiguration.af.default
    configuration.httpMaximumConnectionsPerHost = 64
    var session: Session? = Session(configuration: configuration, eventMonitors: [])
    var failures = 0
    var peak = before
    await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
            group.addTask { [session] in
                await session!.request(url).validate().serializingData().response.error == nil
            }
        }
        for await succeeded in group {
            if !succeeded { failures += 1 }
            peak = max(peak, openFileDescriptors())
        }
    }
    session = nil
    try? await Task.sleep(for: .milliseconds(500))
    return "requests=\(count) failures=\(failures) fds_before=\(before) fds_peak=\(peak) fds_after=\(openFileDescriptors())"
}

/// The soak: COUNT sequential GETs; from 100,000 on, the resident memory at every 100,000th is printed too.
/// The first half warms up (caches, pools and the allocator's arenas reach their size); the second
/// is measured. With `leakingPerRequest`, that many bytes are leaked per request on purpose, for the
/// test that checks a leak shows.
func soak(url: URL, count: Int, leakingPerRequest leak: Int = 0, session: Session = Session()) async -> String {
    let warmUp = max(1, count / 2)
    var failures = 0
    var warm = -1
    var heapWarm = -1
    var leaked: [UnsafeMutableRawPointer?] = []
    leaked.reserveCapacity(leak > 0 ? count : 0)
    var protocolName = "none"
    var checkpoints: [String] = []
    for index in 0..<count {
        if index > 0, index % 100_000 == 0 { checkpoints.append("\(index / 1000)k:\(residentKilobytes())") }
        if index == warmUp { (warm, heapWarm) = (residentKilobytes(), heapKilobytes()) }
        if leak > 0 { leaked.append(malloc(leak)) }
        let response = await session.request(url).validate().serializingData().response
        if response.error != nil { failures += 1 }
        if index == count - 1 { protocolName = response.metrics?.transactionMetrics.last?.networkProtocolName ?? "none" }
    }
    withExtendedLifetime(leaked) {}
    let summary =
        "requests=\(count) failures=\(failures) rss_kb_warm=\(warm) rss_kb_end=\(residentKilobytes()) "
        + "heap_kb_warm=\(heapWarm) heap_kb_end=\(heapKilobytes()) protocol=\(protocolName)"
    return checkpoints.isEmpty ? summary : summary + " rss_kb_at=" + checkpoints.joined(separator: ",")
}

/// `alamofire-probe soak-tls URL CA_FILE COUNT`: the soak over HTTPS, trusting the DER certificate
/// in CA_FILE as a root (an HTTPBinServer's test CA: its TLS port speaks HTTP/2).
func soakOverTLS(url: URL, authorityFile: String, count: Int) async throws -> String {
    let authority = try SecCertificate(derEncoded: Data(contentsOf: URL(fileURLWithPath: authorityFile)))
    return await soak(url: url, count: count, session: Session(eventMonitors: [], additionalTrustRoots: [authority]))
}

Lifeline.endWithParent(program: "alamofire-probe")
do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments == ["reachability"] {
        print(try await reachability())
        exit(0)
    }
    if arguments == ["waits-for-connectivity"] {
        print(try await waitsForConnectivity())
        exit(0)
    }
    if arguments.count == 2, arguments[0] == "get", let url = URL(string: arguments[1]) {
        print(await get(url: url))
        exit(0)
    }
    if arguments.count == 3, ["sessions", "inflight"].contains(arguments[0]), let url = URL(string: arguments[1]),
        let count = Int(arguments[2]), count > 0
    {
        print(arguments[0] == "sessions" ? await sessions(url: url, count: count) : await inFlight(url: url, count: count))
        exit(0)
    }
    if arguments.count == 3, arguments[0] == "disk-cache-get", let url = URL(string: arguments[2]) {
        print(await diskCacheGet(directory: arguments[1], url: url))
        exit(0)
    }
    if arguments.count == 3, arguments[0] == "disk-cache-crash" {
        diskCacheCrash(directory: arguments[1], url: arguments[2])
    }
    if arguments == ["lying-length"] {
        print(try await lyingLength())
        exit(0)
    }
    if arguments.count == 2, arguments[0] == "stream" {
        print(try await stream(path: arguments[1]))
        exit(0)
    }
    if arguments.count == 3, arguments[0] == "websocket-stream", let count = Int(arguments[1]), let size = Int(arguments[2]) {
        print(try await webSocketStream(count: count, size: size))
        exit(0)
    }
    if arguments.count == 4, arguments[0] == "soak-tls", let url = URL(string: arguments[1]), let count = Int(arguments[3]), count > 0 {
        print(try await soakOverTLS(url: url, authorityFile: arguments[2], count: count))
        exit(0)
    }
    guard (3...4).contains(arguments.count), arguments[0] == "soak", let url = URL(string: arguments[1]),
        let count = Int(arguments[2]), count > 0, let leak = arguments.count == 4 ? Int(arguments[3]) : 0
    else {
        throw ProbeError.usage
    }
    print(await soak(url: url, count: count, leakingPerRequest: leak))
} catch {
    FileHandle.standardError.write(
        Data(
            "usage: alamofire-probe soak URL COUNT [LEAK_BYTES] | alamofire-probe soak-tls URL CA_FILE COUNT | alamofire-probe sessions URL COUNT | alamofire-probe inflight URL COUNT | alamofire-probe stream PATH | alamofire-probe websocket-stream COUNT SIZE | alamofire-probe get URL | alamofire-probe lying-length | alamofire-probe reachability | alamofire-probe waits-for-connectivity | alamofire-probe disk-cache-get DIRECTORY URL | alamofire-probe disk-cache-crash DIRECTORY URL\n"
                .utf8))
    exit(2)
}
