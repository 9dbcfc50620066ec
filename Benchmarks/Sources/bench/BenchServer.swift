import Foundation
import HTTPBinServer

/// Where the workloads send requests: nginx on loopback when it can be had, else HTTPBinServer.
struct BenchServer {
    let baseURL: URL
    /// nginx's HTTPS server with HTTP/2, trusted through ``BenchTLS``; nil for the fallback server.
    var tlsBaseURL: URL? = nil
    let description: String
    /// Holds the served files and the workloads' scratch files (tmpfs when there is one).
    let root: URL
    /// Where W3 and W8 download from and W4 and W7 upload to.
    let largeFilePath: String
    let uploadPath: String
    /// Where W6's `/delay/0.5` is answered after a fixed half second by nginx (its echo module), so
    /// the server's own work does not depend on how the client spreads its requests; nil when the
    /// module could not be had, and W6 asks HTTPBinServer instead.
    var delayBaseURL: URL? = nil
    let stop: @Sendable () async -> Void

    /// The documents the workloads fetch.
    static let smallJSON = "/small.json"
    static let itemsJSON = "/items.json"
    /// The same documents, fresh for an hour (`Cache-Control: max-age=3600`): W11's response cache.
    static let cachedPrefix = "/cached"
    /// W3's and W8's file, and W4's and W7's source (in the scratch directory).
    static let largeFile = "/large.bin"
    static let uploadSource = "upload-source.bin"

    /// - Parameters:
    ///   - largeFiles: whether to write the large files W3, W4, W7 and W8 use (over a GiB, so only when needed).
    ///   - needsDocuments: whether a workload fetches the JSON documents, which only nginx serves.
    ///   - needsDelay: whether a workload (W6) asks for `/delay`, which nginx answers with its echo module.
    static func start(quick: Bool, largeFiles: Bool, needsDocuments: Bool, needsDelay: Bool = false) async throws -> BenchServer {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let base = FileManager.default.fileExists(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        let root = base.appendingPathComponent("alamofire-nio-bench-\(getpid())")
        let www = root.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www.appendingPathComponent("upload"), withIntermediateDirectories: true)
        // nginx's workers drop root: they must be able to store uploads and their temporary files.
        for directory in [root, www, www.appendingPathComponent("upload")] {
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        }
        try Documents.small.write(to: www.appendingPathComponent(smallJSON))
        try Documents.items.write(to: www.appendingPathComponent(itemsJSON))
        if largeFiles {
            try makeFile(www.appendingPathComponent(largeFile), size: Sizes.download(quick: quick))
            try makeFile(root.appendingPathComponent(uploadSource), size: Sizes.upload(quick: quick))
        }
        if let nginx = try startNginx(root: root, withDelay: needsDelay) { return nginx }
        // HTTPBinServer has /bytes and /upload for W3, W4, W7 and W8, but not the documents W1, W2
        // and W5 fetch: figures from failed requests would be worse than none.
        guard !needsDocuments else {
            try? FileManager.default.removeItem(at: root)
            throw BenchServerError.nginxUnavailable
        }
        print("nginx is not available: W3, W4, W7 and W8 run against HTTPBinServer instead (not comparable with nginx runs)")
        let server = try await HTTPBinServer.start()
        return BenchServer(
            baseURL: server.baseURL, description: "HTTPBinServer (in-process)", root: root,
            largeFilePath: "/bytes/\(Sizes.download(quick: quick))", uploadPath: "/upload"
        ) {
            try? await server.shutdown()
            try? FileManager.default.removeItem(at: root)
        }
    }

    /// A file of `size` bytes, written in 1 MiB blocks of a repeating pattern.
    private static func makeFile(_ url: URL, size: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<(size / block.count) { try handle.write(contentsOf: block) }
    }

    /// Debian's build of the echo module, whose `echo_sleep` answers W6's `/delay` in fixed time.
    private static let echoModule = "/usr/lib/nginx/modules/ngx_http_echo_module.so"

    /// Installs nginx-light from Debian if missing (and its echo module, `withDelay`), serves the
    /// benchmark files from a temporary directory on a free loopback port, and returns once it answers.
    /// When nginx does not start with the echo module it is started without it.
    private static func startNginx(root: URL, withDelay: Bool) throws -> BenchServer? {
        let binary = "/usr/sbin/nginx"
        let missing =
            (FileManager.default.fileExists(atPath: binary) ? [] : ["nginx-light"])
            + (withDelay && !FileManager.default.fileExists(atPath: echoModule) ? ["libnginx-mod-http-echo"] : [])
        if !missing.isEmpty { installFromDebian(missing) }
        guard FileManager.default.fileExists(atPath: binary) else { return nil }
        if withDelay, FileManager.default.fileExists(atPath: echoModule), let nginx = try launchNginx(binary, root: root, withDelay: true) {
            return nginx
        }
        if withDelay { print("nginx's echo module is not available: W6 asks HTTPBinServer (in-process) for /delay instead") }
        return try launchNginx(binary, root: root, withDelay: false)
    }

    private static func launchNginx(_ binary: String, root: URL, withDelay: Bool) throws -> BenchServer? {
        let port = freePort()
        let tlsPort = freePort()
        let tls = try BenchTLS.writeFiles(in: root)
        // echo_sleep is a timer on nginx's event loop: every request waits the same half second
        // however many arrive together, and the answer is one short chunk.
        let delay = """
            location = /delay/\(Sizes.slowDelay) {
                echo_sleep \(Sizes.slowDelay);
                echo '{"delayed":true}';
            }
            """
        let configuration = """
            \(withDelay ? "load_module \(echoModule);" : "")
            daemon off;
            worker_processes 1;
            pid \(root.path)/nginx.pid;
            error_log \(root.path)/error.log warn;
            events { worker_connections 16384; }
            http {
                access_log off;
                keepalive_requests 1000000;
                keepalive_timeout 120s;
                client_body_temp_path \(root.path)/body;
                proxy_temp_path \(root.path)/proxy;
                fastcgi_temp_path \(root.path)/fastcgi;
                uwsgi_temp_path \(root.path)/uwsgi;
                scgi_temp_path \(root.path)/scgi;
                types { application/json json; }
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(tls.certificate);
                    ssl_certificate_key \(tls.key);
                    root \(root.path)/www;
                }
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path)/www;
                    location /upload/ {
                        dav_methods PUT;
                        client_max_body_size 0;
                        client_body_buffer_size 1m;
                        create_full_put_path on;
                    }
                    location \(cachedPrefix)/ {
                        alias \(root.path)/www/;
                        expires 1h;
                    }
                    \(withDelay ? delay : "")
                }
            }
            """
        try configuration.write(to: root.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", root.appendingPathComponent("nginx.conf").path, "-p", root.path]
        try process.run()
        let baseURL = URL(string: "http://127.0.0.1:\(port)")!
        for _ in 0..<100 where process.isRunning && !answers(baseURL.appendingPathComponent(smallJSON)) { usleep(50_000) }
        guard answers(baseURL.appendingPathComponent(smallJSON)) else {
            process.terminate()
            process.waitUntilExit()
            return nil
        }
        return BenchServer(
            baseURL: baseURL, tlsBaseURL: URL(string: "https://127.0.0.1:\(tlsPort)")!,
            description: "nginx (Debian nginx-light, 1 worker\(withDelay ? ", echo module for W6's /delay" : ""))",
            root: root, largeFilePath: largeFile, uploadPath: "/upload/upload.bin", delayBaseURL: withDelay ? baseURL : nil
        ) {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: root)
        }
    }

    private static func answers(_ url: URL) -> Bool {
        (try? Data(contentsOf: url))?.isEmpty == false
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

}

/// The documents served: a 200-byte JSON object and a ~50 KB JSON array of items.
enum Documents {
    static let small: Data = {
        var text = #"{"id":1,"name":"AlamofireNIO","kind":"benchmark","ok":true,"tags":["a","b","c"],"note":""#
        let closing = #""}"#
        text += String(repeating: "x", count: 200 - text.utf8.count - closing.utf8.count) + closing
        return Data(text.utf8)
    }()

    static let items: Data = {
        let items = (0..<250).map { index in
            Item(
                id: index, title: "Item \(index)", price: Double(index) * 1.25, tags: ["alpha", "beta"], inStock: index % 2 == 0,
                description: String(repeating: "d", count: 80))
        }
        return (try? JSONEncoder().encode(items)) ?? Data()
    }()
}

/// The Codable struct W5 decodes.
struct Item: Codable, Sendable {
    let id: Int
    let title: String
    let price: Double
    let tags: [String]
    let inStock: Bool
    let description: String
}

enum BenchServerError: Error, CustomStringConvertible {
    case nginxUnavailable

    var description: String {
        switch self {
        case .nginxUnavailable:
            "nginx could not be had (apt-get update and apt-get install nginx-light failed, or it did not start): W1, W2 and W5 "
                + "need the documents it serves. Install nginx-light, or run --workload W3, W4, W6, W7 or W8 alone."
        }
    }
}

/// Installs Debian packages. A fresh machine has no package lists: install finds nothing without an
/// update first.
func installFromDebian(_ packages: [String]) {
    print("installing \(packages.joined(separator: ", ")) …")
    runCommand("/usr/bin/apt-get", ["update", "-qq"])
    runCommand("/usr/bin/apt-get", ["install", "-y", "-qq"] + packages)
}

/// Runs a program to its end and returns its exit status (-1 when it cannot start).
@discardableResult
func runCommand(_ path: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    do {
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    } catch {
        return -1
    }
}
