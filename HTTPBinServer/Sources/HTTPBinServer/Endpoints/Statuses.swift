import HTTPTypes
import Hummingbird

/// `/status/:codes`: answers with the given status, or one picked from a weighted list
/// (`200,500` or `200:0.9,500:0.1`).
enum Statuses {
    static func status(_ ex: Exchange, _ rest: [String]) throws -> Response {
        guard rest.count == 1 else { throw HTTPBinError(.notFound) }
        var choices: [(code: Int, weight: Double)] = []
        for item in rest[0].split(separator: ",") {
            let parts = item.split(separator: ":", maxSplits: 1)
            guard let code = Int(parts[0]), (100...599).contains(code),
                let weight = parts.count > 1 ? Double(parts[1]) : 1, weight >= 0
            else { throw HTTPBinError(.badRequest, "Invalid status code") }
            choices.append((code, weight))
        }
        guard let code = pick(choices) else { throw HTTPBinError(.badRequest, "Invalid status code") }
        return response(for: code)
    }

    private static func pick(_ choices: [(code: Int, weight: Double)]) -> Int? {
        let total = choices.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return choices.first?.code }
        var point = Double.random(in: 0..<total)
        for choice in choices {
            if point < choice.weight { return choice.code }
            point -= choice.weight
        }
        return choices.last?.code
    }

    /// Like httpbin, some codes come with the headers a client needs to act on them.
    private static func response(for code: Int) -> Response {
        let status = HTTPResponse.Status(code: code)
        var headers: HTTPFields = [:]
        var body = ""
        switch code {
        case 301, 302, 303, 305, 307, 308:
            headers[.location] = "/redirect/1"
        case 401:
            headers[.wwwAuthenticate] = "Basic realm=\"Fake Realm\""
        case 407:
            headers[.proxyAuthenticate] = "Basic realm=\"Fake Realm\""
        case 418:
            headers[.contentType] = "text/plain; charset=utf-8"
            body = "I'm a teapot: short and stout.\n"
        default:
            break
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: .init(string: body)))
    }
}
