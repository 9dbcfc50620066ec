import AlamofireNIO
import Foundation

/// `alamofire-probe soak URL COUNT`
///
/// Makes COUNT sequential GETs of URL through a `Session`, as `AF.request(url).validate().responseData` users
/// do, and prints `requests=<n> failures=<n> rss_kb_warm=<VmRSS after the first fifth>
/// rss_kb_end=<VmRSS at the end>`. The tests run it as a process of its own, so that memory it
/// keeps per request shows as growth between the two readings.
func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

enum ProbeError: Error { case usage }

func soak(url: URL, count: Int) async -> String {
    let session = Session()
    let warmUp = max(1, count / 5)
    var failures = 0
    var warm = -1
    for index in 0..<count {
        if index == warmUp { warm = residentKilobytes() }
        let response = await session.request(url).validate().serializingData().response
        if response.error != nil { failures += 1 }
    }
    return "requests=\(count) failures=\(failures) rss_kb_warm=\(warm) rss_kb_end=\(residentKilobytes())"
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count == 3, arguments[0] == "soak", let url = URL(string: arguments[1]), let count = Int(arguments[2]), count > 0 else {
        throw ProbeError.usage
    }
    print(await soak(url: url, count: count))
} catch {
    FileHandle.standardError.write(Data("usage: alamofire-probe soak URL COUNT\n".utf8))
    exit(2)
}
