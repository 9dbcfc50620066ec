import AlamofireNIO
import AlamofireNIOLoading
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `alamofire-probe disk-cache-get DIRECTORY URL`: one GET of URL through a `Session` whose
/// `URLCache` keeps its disk in DIRECTORY, as a command-line tool run twice would; prints
/// `status=<code or error> fetch=<where the response came from>`.
func diskCacheGet(directory: String, url: URL) async -> String {
    let configuration = URLSessionConfiguration.af.default
    configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, diskPath: directory)
    let session = Session(configuration: configuration, eventMonitors: [])
    defer { withExtendedLifetime(session) {} }
    let response = await session.request(url).serializingData().response
    let status = response.response.map { String($0.statusCode) } ?? "error"
    let fetch = response.metrics?.transactionMetrics.last.map { "\($0.resourceFetchType)" } ?? "none"
    return "status=\(status) fetch=\(fetch)"
}

/// `alamofire-probe disk-cache-crash DIRECTORY URL`: stores an entry for URL whose body is `first`
/// in the disk store of DIRECTORY, then starts to replace it with one whose body is `second` and
/// is killed (SIGKILL) once that one's temporary file is written, before it is renamed into place.
func diskCacheCrash(directory: String, url: String) -> Never {
    guard let store = DiskCacheStore(cacheDirectory: URL(fileURLWithPath: directory)) else { exit(3) }
    func entry(_ body: String) -> DiskCacheEntry {
        DiskCacheEntry(url: url, statusCode: 200, headers: [.init("Content-Type", "text/plain")], body: Data(body.utf8))
    }
    store.write(entry("first"), capacity: 1 << 20)
    store.write(entry("second"), capacity: 1 << 20) { kill(getpid(), SIGKILL) }
    exit(4)
}
