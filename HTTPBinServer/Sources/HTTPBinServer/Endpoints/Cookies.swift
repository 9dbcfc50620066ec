import Foundation
import HTTPTypes
import Hummingbird

/// `/cookies`, `/cookies/set?name=value`, `/cookies/set/:name/:value` and `/cookies/delete?name`.
enum Cookies {
    static func route(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        switch rest.first {
        case nil:
            return try ex.json(["cookies": received(ex)])
        case "set" where rest.count == 3:
            return redirect(setting: [(rest[1], rest[2])])
        case "set" where rest.count == 1:
            return redirect(setting: ex.query.map { ($0.name, $0.value) })
        case "delete" where rest.count == 1:
            return redirect(setting: ex.query.map { ($0.name, "") }, expired: true)
        default:
            throw HTTPBinError(.notFound)
        }
    }

    /// The cookies of every `Cookie` header; a repeated name keeps its last value.
    private static func received(_ ex: Exchange) -> [String: String] {
        var cookies: [String: String] = [:]
        for field in ex.headers where field.name == .cookie {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty else { continue }
                cookies[name] = parts.count > 1 ? String(parts[1]) : ""
            }
        }
        return cookies
    }

    /// 302 to `/cookies` with one `Set-Cookie` per pair.
    private static func redirect(setting pairs: [(String, String)], expired: Bool = false) -> Response {
        var headers: HTTPFields = [.location: "/cookies"]
        for (name, value) in pairs {
            let attributes = expired ? "; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/" : "; Path=/"
            headers.append(HTTPField(name: .setCookie, value: "\(name)=\(value)\(attributes)"))
        }
        return Response(status: .found, headers: headers)
    }
}
