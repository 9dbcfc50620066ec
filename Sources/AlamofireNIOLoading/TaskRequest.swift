import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request a task sends next, and its body, hop by hop: a followed redirect replaces the
/// request (and drops an upload's body when it changes the method, as URLSession does), and a
/// body stream the delegate gives replaces a spent one. The request is what the task reports as its
/// current one; what goes on the wire only (cookies, a challenge's answer) is added per exchange.
struct TaskRequest: Sendable {
    /// The request the next exchange sends.
    private(set) var current: URLRequest
    /// Its body, when it is not in `current` (an upload's).
    private(set) var body: RequestBody?

    init(_ request: URLRequest, body: RequestBody?) {
        self.current = request
        self.body = body
    }

    /// The body when it is in memory (for Digest's `auth-int`): nil for a file, stream or chunks.
    var bodyInMemory: Data? {
        switch body {
        case .data(let data): data
        case .file, .stream, .chunks: nil
        case nil: current.httpBody ?? Data()
        }
    }

    /// Whether sending the request again needs a new body stream from the delegate (its body is a
    /// stream, read once).
    var needsBodyStream: Bool { body.map { !$0.isReplayable } ?? false }

    /// Follows a redirect to `next`; returns whether it goes to another origin than the request it
    /// follows, and whether sending it needs a new body stream. A redirect that changes the method
    /// (a 303, or a 301 or 302 from a POST) drops the upload's body.
    mutating func follow(_ next: URLRequest) -> (leavesOrigin: Bool, needsBodyStream: Bool) {
        var leavesOrigin = false
        if let from = current.url, let to = next.url { leavesOrigin = !RedirectPolicy.isSameOrigin(from, to) }
        if next.httpMethod != current.httpMethod { body = nil }
        current = next
        return (leavesOrigin, needsBodyStream)
    }

    /// The delegate gave a new stream for the body.
    mutating func replaceBodyStream(with stream: InputStream) {
        body = .stream(stream)
    }
}
