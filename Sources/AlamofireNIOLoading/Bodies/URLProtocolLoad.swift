import AFSynchronization
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One load through a `URLProtocol` subclass from the configuration's `protocolClasses`, as
/// URLSession performs it: the first class whose `canInit(with:)` accepts the request makes an
/// instance with this load as its `URLProtocolClient`, and `startLoading()` runs; what the instance
/// reports (a response, data, a redirect, the end or a failure) ends the exchange. This is how
/// tests stub the network (Mocker-style libraries) without a socket.
final class URLProtocolLoad: NSObject, URLProtocolClient, @unchecked Sendable {
    // @unchecked: the mutable state is behind `lock` (an NSLock: the URLProtocol instance, not
    // Sendable, cannot go through a Mutex).

    /// How the load ended.
    enum Outcome {
        /// The final response and its whole body.
        case loaded(URLResponse, Data)
        /// The protocol redirected: the response and the request it proposes.
        case redirected(URLResponse, URLRequest)
        case failed(URLError)
    }

    private struct State {
        var response: URLResponse?
        var data = Data()
        var ended = false
        /// A stop that came before the start: the protocol is never started.
        var stopped = false
        var instance: URLProtocol?
    }

    private let lock = NSLock()
    private var unsafeState = State()
    private let onData: @Sendable (Int64) -> Void
    private let onEnd: @Sendable (Outcome) -> Void

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { body(&unsafeState) }
    }

    /// - Parameters:
    ///   - onData: the running total of body bytes, as they arrive.
    ///   - onEnd: called once, however the load ends.
    init(onData: @escaping @Sendable (Int64) -> Void, onEnd: @escaping @Sendable (Outcome) -> Void) {
        self.onData = onData
        self.onEnd = onEnd
    }

    /// The first of `classes` that accepts `request`.
    static func protocolClass(for request: URLRequest, among classes: [URLProtocol.Type]) -> URLProtocol.Type? {
        classes.first { $0.canInit(with: request) }
    }

    /// The user's protocol classes in `classes` (a configuration's `protocolClasses`): the
    /// platform's own (FoundationNetworking's HTTP, FTP and WebSocket classes, listed in every
    /// default configuration) are left out, since the loading layer is the HTTP loader.
    static func userClasses(_ classes: [AnyClass]?) -> [URLProtocol.Type] {
        (classes ?? []).compactMap { $0 as? URLProtocol.Type }.filter { !platformClasses.contains(ObjectIdentifier($0)) }
    }

    private static let platformClasses = Set((URLSessionConfiguration.default.protocolClasses ?? []).map { ObjectIdentifier($0) })

    /// Starts loading `request` with an instance of `protocolClass`; `body` becomes the request's
    /// `httpBody` or `httpBodyStream`, as URLSession hands an upload's body to a protocol.
    func start(_ protocolClass: URLProtocol.Type, request: URLRequest, body: RequestBody?) {
        var request = protocolClass.canonicalRequest(for: request)
        switch body {
        case .data(let data): request.httpBody = data
        case .file(let url): request.httpBodyStream = InputStream(url: url)
        case .stream(let stream): request.httpBodyStream = stream
        case .chunks:
            // An async producer (an integration's body) cannot be read as an `InputStream` without
            // blocking: rather than load the request without its body, the load fails.
            var info: [String: Any] = [NSLocalizedDescriptionKey: "a streamed request body cannot be handed to a URL protocol"]
            if let url = request.url { info[NSURLErrorFailingURLErrorKey] = url }
            return end(.failed(URLError(.requestBodyStreamExhausted, userInfo: info)))
        case nil: break
        }
        let instance = protocolClass.init(request: request, cachedResponse: nil, client: self)
        let stoppedAlready = withState { state in
            if !state.stopped { state.instance = instance }
            return state.stopped
        }
        guard !stoppedAlready else {
            return end(.failed(URLError(.cancelled, userInfo: request.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])))
        }
        instance.startLoading()
    }

    /// Stops the load (a cancel): the protocol is told to stop, and the load ends as cancelled.
    func stop(url: URL?) {
        guard
            let instance = withState({ state -> URLProtocol? in
                // Not started yet: the start finds the stop and ends the load.
                if state.instance == nil { state.stopped = true }
                return state.ended ? nil : state.instance
            })
        else { return }
        instance.stopLoading()
        end(.failed(URLError(.cancelled, userInfo: url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])))
    }

    private func end(_ outcome: Outcome) {
        let first = withState { state in
            defer { state.ended = true }
            if state.ended { return false }
            // Let go of the instance (it holds this load as its client).
            state.instance = nil
            return true
        }
        if first { onEnd(outcome) }
    }

    // MARK: URLProtocolClient

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        end(.redirected(redirectResponse, request))
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        end(.loaded(cachedResponse.response, cachedResponse.data))
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        withState { $0.response = response }
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        let total = withState { state -> Int64? in
            guard !state.ended else { return nil }
            state.data.append(data)
            return Int64(state.data.count)
        }
        if let total { onData(total) }
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        let (response, data) = withState { ($0.response, $0.data) }
        guard let response else {
            return end(.failed(URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "the URL protocol sent no response"])))
        }
        end(.loaded(response, data))
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
        let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
        end(.failed(urlError))
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        // Not answered: a protocol that asks goes on without credentials.
        challenge.sender?.continueWithoutCredential(for: challenge)
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
}
