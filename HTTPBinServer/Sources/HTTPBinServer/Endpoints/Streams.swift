import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Endpoints whose bodies are generated or consumed as streams, so their size never sets the
/// server's memory: `/bytes`, `/stream-bytes`, `/stream`, `/drip`, `/delay`, `/range`, `/upload`, `/sse`.
enum Streams {
    /// Size of the chunks large bodies are written in.
    static let chunkSize = 64 * 1024
    /// The largest body the generators accept (64 GiB).
    static let maximumLength = 1 << 36

    /// `/bytes/:n?seed=`: n random bytes with a Content-Length.
    static func bytes(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        let length = try lengthParameter(rest)
        let seed = try seed(ex)
        let body = ResponseBody(contentLength: length) { writer in
            var generator = SeededBytes(seed: seed)
            var remaining = length
            while remaining > 0 {
                let size = min(remaining, chunkSize)
                var chunk = ByteBuffer()
                generator.write(size, into: &chunk)
                try await writer.write(chunk)
                remaining -= size
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/stream-bytes/:n?seed=&chunk_size=`: n random bytes, chunked, without a Content-Length.
    static func streamBytes(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        let length = try lengthParameter(rest)
        let size = max(1, ex.queryValue("chunk_size").flatMap(Int.init) ?? 10 * 1024)
        let seed = try seed(ex)
        let body = ResponseBody { writer in
            var generator = SeededBytes(seed: seed)
            var remaining = length
            while remaining > 0 {
                var chunk = ByteBuffer()
                generator.write(min(remaining, size), into: &chunk)
                remaining -= chunk.readableBytes
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/stream/:n`: n lines of JSON, each the `/get` summary with an `id`, one chunk each (n ≤ 100).
    static func stream(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        let count = min(try lengthParameter(rest), 100)
        let summary = Echo.requestSummary(ex)
        var lines: [ByteBuffer] = []
        for id in 0..<count {
            var line = summary
            line["id"] = id
            var buffer = ByteBuffer(
                bytes: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes]))
            buffer.writeString("\n")
            lines.append(buffer)
        }
        let body = ResponseBody { [lines] writer in
            for line in lines { try await writer.write(line) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }

    /// `/drip?duration=2&numbytes=10&code=200&delay=0`: waits `delay` seconds, then sends `numbytes`
    /// asterisks spread evenly over `duration` seconds.
    static func drip(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        let duration = max(0, ex.queryValue("duration").flatMap(Double.init) ?? 2)
        let delay = max(0, ex.queryValue("delay").flatMap(Double.init) ?? 0)
        let count = ex.queryValue("numbytes").flatMap(Int.init) ?? 10
        let code = ex.queryValue("code").flatMap(Int.init) ?? 200
        guard count > 0, count <= 10 * 1024 * 1024, (100...599).contains(code) else {
            throw HTTPBinError(.badRequest, "numbytes must be in 1...10485760 and code a status code")
        }
        let pause = duration / Double(count)
        let channel = ex.channel
        let body = ResponseBody(contentLength: count) { writer in
            try await Exchange.pause(delay, unlessClosed: channel)
            for _ in 0..<count {
                try await writer.write(ByteBuffer(string: "*"))
                try await Exchange.pause(pause, unlessClosed: channel)
            }
            try await writer.finish(nil)
        }
        return Response(status: .init(code: code), headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/hold/:gate`: answers like `/anything` (without `method`) once the test opens `gate` with
    /// ``HTTPBinServer/release(_:)``.
    static func hold(_ ex: Exchange, _ rest: [String], gates: ConnectionRecorder) async throws -> Response {
        guard rest.count == 1 else { throw HTTPBinError(.notFound) }
        try await gates.hold(at: rest[0], on: ex.channel)
        return try ex.json(try await Echo.requestDescription(ex))
    }

    /// `/delay/:n`: answers like `/anything` (without `method`) after min(n, 10) seconds.
    static func delay(_ ex: Exchange, _ rest: [String]) async throws -> Response {
        guard rest.count == 1, let seconds = Double(rest[0]), seconds >= 0 else { throw HTTPBinError(.notFound) }
        try await ex.pause(min(seconds, 10))
        return try ex.json(try await Echo.requestDescription(ex))
    }

    /// `/range/:n?chunk_size=&duration=&etag=&last_modified=&ignore_if_range=&abort_at=&hold=&hold_at=`: n bytes of
    /// `abc…z` repeated, honouring `Range` and `If-Range` with 206 and 416 as RFC 9110 asks. Its ETag
    /// is `range<n>`, or `etag` (none when `etag=none`); with `last_modified` it also has a fixed
    /// `Last-Modified`, which `If-Range` may name instead. `ignore_if_range` answers a range with 206
    /// whatever `If-Range` says (a server that does not check it); `misaligned` answers a range with the
    /// body's first bytes (a broken server); `abort_at=k` closes the connection once k bytes of a whole
    /// (200) body are sent; `hold=gate&hold_at=k` (k in `0..<n`) stops a whole body once k bytes are
    /// sent until the test opens `gate` (``HTTPBinServer/release(_:)``) or the client leaves.
    static func range(_ ex: Exchange, _ rest: [String], gates: ConnectionRecorder) throws -> Response {
        try ex.require(.get)
        let length = try lengthParameter(rest)
        let etag: String? = ex.queryValue("etag").map { $0 == "none" ? nil : "\"\($0)\"" } ?? "\"range\(length)\""
        let lastModified = ex.queryValue("last_modified") != nil ? "Wed, 21 Oct 2026 07:28:00 GMT" : nil
        var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
        if let etag { headers[.eTag] = etag }
        if let lastModified { headers[.lastModified] = lastModified }
        var selection = 0..<length
        var status = HTTPResponse.Status.ok
        let ifRangeMatches =
            ex.queryValue("ignore_if_range") != nil
            || ex.headers[.ifRange].map { value in (etag.map { $0 == value } ?? false) || value == lastModified } ?? true
        if let rangeHeader = ex.headers[.range], ifRangeMatches {
            switch ByteRange.parse(rangeHeader, length: length) {
            case .satisfiable(var range):
                // A broken server that sends the start of the body whatever range was asked for.
                if ex.queryValue("misaligned") != nil { range = 0..<range.count }
                selection = range
                status = .partialContent
                headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)"
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(length)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .ignored:
                break
            }
        }
        // Only a whole body is cut short, so a client can continue it with a range.
        let abortAt = status == .ok ? ex.queryValue("abort_at").flatMap(Int.init) : nil
        var hold: (gate: String, at: Int)?
        if status == .ok, let gate = ex.queryValue("hold") {
            guard let at = ex.queryValue("hold_at").flatMap(Int.init), (0..<length).contains(at) else {
                throw HTTPBinError(.badRequest, "hold needs a hold_at in 0..<\(length)")
            }
            hold = (gate, at)
        }
        let size = max(1, ex.queryValue("chunk_size").flatMap(Int.init) ?? 10 * 1024)
        let duration = max(0, ex.queryValue("duration").flatMap(Double.init) ?? 0)
        let chunks = (selection.count + size - 1) / size
        let pause = chunks > 0 ? duration / Double(chunks) : 0
        let channel = ex.channel
        // Every chunk is a slice of one pattern buffer (the byte at offset n is the n % 26th letter), so
        // a large body costs no generation.
        let pattern = ByteBuffer(bytes: (0..<(min(size, selection.count) + 26)).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let body = ResponseBody(contentLength: selection.count) { [selection, hold] writer in
            var offset = selection.lowerBound
            while offset < selection.upperBound {
                if let hold, offset == hold.at { try await gates.hold(at: hold.gate, on: channel) }
                var end = min(offset + size, selection.upperBound)
                if let abortAt, end >= abortAt { end = max(offset, abortAt) }
                if let hold, offset < hold.at, end > hold.at { end = hold.at }
                try await writer.write(pattern.getSlice(at: offset % 26, length: end - offset)!)
                if let abortAt, end >= abortAt {
                    // Leaves the body short: the connection closes with bytes still promised.
                    throw HTTPBinError(.internalServerError)
                }
                offset = end
                try await Exchange.pause(pause, unlessClosed: channel)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// `/upload` (POST or PUT): reads the body as it arrives without keeping it, and answers with its
    /// length and SHA-256.
    static func upload(_ ex: Exchange) throws -> Response {
        try ex.require(.post, .put)
        let body = ResponseBody { [request = ex.request] writer in
            var hasher = SHA256()
            var count = 0
            for try await chunk in request.body {
                count += chunk.readableBytes
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            let summary = "{\"bytes\": \(count), \"sha256\": \"\(hasher.finalize().hexString)\"}\n"
            try await writer.write(ByteBuffer(string: summary))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }

    /// `/sse?count=3&interval=0&per_connection=&long_line=`: a `text/event-stream` of events with ids
    /// `0..<count`, `interval` seconds apart, starting after the request's `Last-Event-ID` (as an
    /// EventSource server resumes); with `per_connection`, the stream ends after that many events, so a
    /// client must reconnect for the rest; with `long_line=N`, the events are followed by a `data:` line
    /// of N bytes that never ends, sent 64 KiB at a time while the client reads.
    static func serverSentEvents(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        let count = max(0, ex.queryValue("count").flatMap(Int.init) ?? 3)
        let interval = max(0, ex.queryValue("interval").flatMap(Double.init) ?? 0)
        let perConnection = ex.queryValue("per_connection").flatMap(Int.init).map { max(1, $0) } ?? count
        let first = ex.headers[HTTPField.Name("Last-Event-ID")!].flatMap(Int.init).map { $0 + 1 } ?? 0
        let ids = Array(first..<max(first, min(count, first + perConnection)))
        let longLine = min(maximumLength, max(0, ex.queryValue("long_line").flatMap(Int.init) ?? 0))
        let channel = ex.channel
        let body = ResponseBody { writer in
            for (index, id) in ids.enumerated() {
                if index > 0 { try await Exchange.pause(interval, unlessClosed: channel) }
                try await writer.write(ByteBuffer(string: "id: \(id)\nevent: tick\ndata: {\"id\":\(id)}\n\n"))
            }
            if longLine > 0 {
                try await writer.write(ByteBuffer(string: "data: "))
                var remaining = longLine
                while remaining > 0 {
                    let size = min(remaining, 64 * 1024)
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "x"), count: size))
                    remaining -= size
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    private static func lengthParameter(_ rest: [String]) throws -> Int {
        guard rest.count == 1, let n = Int(rest[0]), (0...maximumLength).contains(n) else { throw HTTPBinError(.notFound) }
        return n
    }

    private static func seed(_ ex: Exchange) throws -> UInt64 {
        guard let text = ex.queryValue("seed") else { return UInt64.random(in: .min ... .max) }
        guard let seed = UInt64(text) else { throw HTTPBinError(.badRequest, "seed must be an unsigned integer") }
        return seed
    }
}

/// A single byte range of a `Range: bytes=…` header.
enum ByteRange: Equatable {
    /// The bytes to send.
    case satisfiable(Range<Int>)
    /// A bytes range that selects nothing of the representation: 416.
    case unsatisfiable
    /// Not a bytes range this server understands; send the whole representation.
    case ignored

    static func parse(_ header: String, length: Int) -> ByteRange {
        guard header.hasPrefix("bytes=") else { return .ignored }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .ignored }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return .ignored }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .satisfiable(max(0, length - suffix)..<length)
        }
        guard let start = Int(first), start >= 0 else { return .ignored }
        let end: Int
        if last.isEmpty {
            end = length - 1
        } else {
            guard let value = Int(last), value >= start else { return .ignored }
            end = min(value, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .satisfiable(start..<(end + 1))
    }
}
