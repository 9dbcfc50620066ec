import AFSynchronization
import AlamofireNIOTransport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a task's bytes move: progress, the final body handed over (collected, streamed or written
/// to a file), and the loads that need no exchange (`file:`/`data:` URLs, URL protocols).
extension LoadingTask {
    func didSendBody(totalBytesSent: Int64, expected: Int64?) {
        let delta = state.withLock { $0.counts.sent(total: totalBytesSent, expected: expected) }
        delegate.loadingTask(self, didSendBodyData: delta, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: expected)
    }

    func didReceiveBody(totalBytes: Int64, expected: Int64?) {
        // A streamed body's bytes are reported as its data is handed on (`receiveBody`), after the
        // response. A body collected in memory reports them as they arrive, before its response,
        // which comes with the whole body.
        let reporting: Bool
        if case .stream = destination { reporting = false } else { reporting = true }
        let added = state.withLock { $0.counts.received(total: totalBytes, expected: expected, reporting: reporting) }
        guard let added else { return }
        delegate.loadingTask(self, didReceiveBodyBytes: added, totalBytesReceived: totalBytes, totalBytesExpected: expected)
    }

    /// Tells the delegate of body bytes held back until their data was handed over, if any were.
    func report(_ held: ReceivedReport?) {
        guard let held else { return }
        delegate.loadingTask(self, didReceiveBodyBytes: held.added, totalBytesReceived: held.total, totalBytesExpected: held.expected)
    }

    /// The most of a challenge's body a download or a stream reads before the delegate decides.
    static let challengeBodyReadFirstLimit = 64 * 1024

    /// What becomes of the body of a response the delegate decides on before its body is handed
    /// over, while it decides.
    enum BodyBeforeDecision: Equatable {
        /// Left unread, to be read once the delegate has decided (a final response's).
        case unread
        /// Read to its end and dropped, keeping the connection for the next hop.
        case dropped
        /// Read to its end and kept (it is the result should the delegate decline), within `limit` bytes.
        case kept(limit: Int)

        /// Reads `body` as this says: the bytes kept, if any.
        func read(_ body: TransportResponseBody) async throws -> ByteBuffer? {
            switch self {
            case .unread: return nil
            case .dropped:
                for try await _ in body {}
                return nil
            case .kept(let limit): return try await body.collect(upTo: limit)
            }
        }
    }

    /// What becomes of a response's body while the delegate decides on it, given its `verdict`;
    /// `stored` says a 304 stands for a stored response (its own body is empty), `continuing` that
    /// the task continues a download.
    ///
    /// A redirect's body is read first and dropped, or kept, within the session's
    /// `maximumBodySize`, when the delegate keeps a data request's body whole (as a collected one
    /// is). A challenge's is the result should the delegate decline: kept in the same way by a data
    /// request; a download or a stream, which keeps no body in memory, reads first only one that
    /// announces at most ``challengeBodyReadFirstLimit`` bytes (and never a continued download,
    /// whose partial file a declined 401 must leave as it is). A larger one waits unread, as a final
    /// response's does; its exchange is then not a transaction of the task's, and the answer goes on
    /// a new connection.
    func bodyBeforeDecision(
        verdict: LoadingTaskStateMachine.ResponseVerdict, stored: Bool, head: HTTPResponseHead, continuing: Bool
    ) -> BodyBeforeDecision {
        let keptWhole: Bool
        if case .stream(keptWhole: true) = destination { keptWhole = true } else { keptWhole = false }
        if stored { return .dropped }
        switch verdict {
        case .final:
            return .unread
        case .redirect:
            return keptWhole ? .kept(limit: session.maximumBodySize) : .dropped
        case .challenge:
            if keptWhole { return .kept(limit: session.maximumBodySize) }
            guard !continuing, let length = head.headers.first(name: "content-length").flatMap({ Int($0) }),
                length <= Self.challengeBodyReadFirstLimit
            else { return .unread }
            return .kept(limit: Self.challengeBodyReadFirstLimit)
        }
    }

    /// The stored body a 304 stands for, its bytes counted as received (as URLSession's
    /// `didReceive data` of it is): the 304's own body is empty.
    func storedBody(_ stored: Data) -> ByteBuffer {
        let length = Int64(stored.count)
        didReceiveBody(totalBytes: length, expected: length)
        return ByteBuffer(bytes: stored)
    }

    /// The transaction of a streamed exchange whose body has been read.
    func transaction(
        of streamed: TransportResponse, request: URLRequest, response: ReceivedResponse?
    ) async throws
        -> TransactionMetrics
    {
        let metrics = try await streamed.finished().metrics
        return TransactionMetrics(metrics, request: request, response: response, clock: wallClock)
    }

    func receiveBody() {
        switch destination {
        case .webSocket:
            readWebSocket()
        case .memory:
            // Taken as the delegate allowed the response (`dispositionDecided`): nothing is left here.
            handOver(state.withLock { $0.takeCollectedBody() })
        case .stream(let keptWhole):
            let (held, generation) = state.withLock { state in (state.machine.takeHeldBody(), state.work.start()) }
            guard case .streamed(let streamed, let request) = held else { return handOver(collected: held.collected) }
            let url = request.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            // On the connection's event loop, where the chunks are produced, when the delegate takes
            // them there: each read then reaches the consumers with one thread crossing, not two.
            let executor = delegate.loadingTaskTakesStreamedBodyOnEventLoop(self) ? EventLoopTaskExecutor(streamed.eventLoop) : nil
            let work = Task(executorPreference: executor) { [self] in
                do {
                    // A copy for the cache, while it stays small enough to be offered.
                    var copy: Data? = wantsCacheCopy() ? Data() : nil
                    // The bytes the transport counts are reported once their data is handed on.
                    var delivered: Int64 = 0
                    for try await chunk in streamed.body where chunk.readableBytes > 0 {
                        // Chunks already buffered are handed out after a cancel: none is delivered then.
                        try Task.checkCancellation()
                        let data = chunk.readableData
                        if keptWhole, delivered + Int64(data.count) > Int64(session.maximumBodySize) {
                            throw TransportError.bodyTooLarge(limit: session.maximumBodySize)
                        }
                        if let kept = copy?.count {
                            if kept + data.count <= session.cachePolicy.largestStorableBody { copy!.append(data) } else { copy = nil }
                        }
                        delegate.loadingTask(self, didReceive: data)
                        delivered += Int64(data.count)
                        report(state.withLock { $0.counts.releaseHeldReceived(upTo: delivered) })
                        await delegate.loadingTaskAwaitsBodyDemand(self)
                    }
                    report(state.withLock { $0.counts.releaseHeldReceived() })
                    let response = state.withLock { $0.response }
                    let transaction = try await transaction(of: streamed, request: request, response: response)
                    let offer = state.withLock { state in
                        state.log.record(transaction)
                        return state.cache.offer(of: state.response, to: state.request.current)
                    }
                    finishBody(offering: copy, offer)
                } catch {
                    exchangeFailed(LoadingSession.urlError(error, url: url))
                }
            }
            setCancelWork({ work.cancel() }, generation: generation)
        case .file(let directory):
            let (held, response, generation) = state.withLock { state in
                (state.machine.takeHeldBody(), state.response, state.work.start())
            }
            let pending: (streamed: TransportResponse, request: URLRequest)?
            let local: ByteBuffer?
            switch held {
            case .streamed(let streamed, let request): (pending, local) = ((streamed, request), nil)
            case .collected(let buffer): (pending, local) = (nil, buffer)
            // A declined redirect's body was read already: there is no file.
            case .none: return perform(state.withLock { $0.machine.bodyReceived() })
            }
            let url = response?.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            let plan = downloadPlan(for: response?.urlResponse, streamed: pending != nil, directory: directory)
            if let offset = plan.reportedOffset {
                delegate.loadingTask(self, didResumeAtOffset: offset, expectedTotalBytes: plan.expectedTotalBytes ?? -1)
            }
            let (offset, expected) = (plan.offset ?? 0, plan.expectedTotalBytes)
            var written: (@Sendable (Int64) -> Void)?
            if plan.countsWrittenBytes {
                written = { count in self.didReceiveBody(totalBytes: offset + count, expected: expected) }
            }
            let work = Task {
                do {
                    if let (streamed, request) = pending {
                        try await DownloadFile.write(streamed.body, to: plan.file, at: plan.offset, written: written)
                        let transaction = try await transaction(of: streamed, request: request, response: response)
                        state.withLock { $0.log.record(transaction) }
                    } else if let local {
                        try await DownloadFile.write(local, to: plan.file)
                    }
                    // A cancel that came while the file was written ends the task here, as URLSession
                    // does not hand a cancelled download's file over.
                    try Task.checkCancellation()
                    handOverDownloadFile()
                    // The delegate moves the file (a copy, across volumes) and runs user code: off the
                    // concurrency pool, as URLSession calls it on its delegate queue.
                    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                        DispatchQueue.global().async {
                            self.delegate.loadingTask(self, didFinishDownloadingTo: plan.file)
                            finished.resume()
                        }
                    }
                    perform(state.withLock { $0.machine.bodyReceived() })
                } catch {
                    // The partial file stays until the task completes, which keeps it for resume data or removes it.
                    exchangeFailed(LoadingSession.urlError(error, url: url))
                }
            }
            setCancelWork({ work.cancel() }, generation: generation)
        }
    }

    /// Tells the delegate of the final response (the one just decided on, or the stored one) and
    /// waits for its disposition.
    func deliverResponse(_ response: ReceivedResponse?) {
        guard let response else { return dispositionDecided(allow: true) }
        delegate.loadingTask(self, didReceive: response) { disposition in self.dispositionDecided(allow: disposition == .allow) }
    }

    /// The delegate's answer to the response. A body kept in memory is already here: the lock
    /// section that records the answer takes it, with what offering it to the cache needs, and it is
    /// handed over at once.
    func dispositionDecided(allow: Bool) {
        let (action, collected) = state.withLock { state -> (LoadingTaskStateMachine.Action, CollectedBody?) in
            let action = state.machine.dispositionDecided(allow: allow)
            guard action == .receiveBody, case .memory = destination else { return (action, nil) }
            return (action, state.takeCollectedBody())
        }
        guard let collected else { return perform(action) }
        handOver(collected)
    }

    /// Hands over a body already in memory (collected, local, or a declined redirect's: none).
    func handOver(collected body: ByteBuffer?) {
        handOver(state.withLock { $0.takeCollectedBody(body) })
    }

    private func handOver(_ collected: CollectedBody) {
        let (body, offer, progress) = collected
        let data = body?.readableData ?? Data()
        if !data.isEmpty { delegate.loadingTask(self, didReceive: data) }
        report(progress)
        finishBody(offering: data, offer)
    }

    /// Reads a `file:` or `data:` URL: one transaction, no policy (no cookies, redirects or
    /// challenges apply), a plain `URLResponse`.
    func loadLocalResource(_ url: URL, for request: URLRequest, generation: Int) {
        let work = Task {
            do {
                let loaded = try await LocalResource.load(url, maximumSize: session.maximumBodySize)
                let started = state.withLock { $0.log.exchangeStart }
                let response = ReceivedResponse(loaded.response)
                let transaction = TransactionMetrics(
                    request: request, response: response, fetchStart: started, end: Date(), fetchType: .unknown)
                let length = Int64(loaded.body.readableBytes)
                didReceiveBody(totalBytes: length, expected: length)
                decide(response, Verdict(), body: .collected(loaded.body)) { $0.log.record(transaction) }
            } catch {
                exchangeFailed(LoadingSession.urlError(error, url: url))
            }
        }
        setCancelWork({ work.cancel() }, generation: generation)
    }

    /// Loads through a `URLProtocol` of the configuration's: one transaction, no policy but
    /// redirects (no cookies, challenges or cache), as URLSession leaves those to the protocol.
    func loadThroughProtocol(_ protocolClass: URLProtocol.Type, request: URLRequest, body: RequestBody?, generation: Int) {
        let load = URLProtocolLoad(
            onData: { [weak self] total in self?.didReceiveBody(totalBytes: total, expected: nil) },
            onEnd: { [weak self] outcome in
                guard let self else { return }
                let started = self.state.withLock { $0.log.exchangeStart }
                func transaction(_ response: ReceivedResponse) -> TransactionMetrics {
                    TransactionMetrics(request: request, response: response, fetchStart: started, end: Date(), fetchType: .unknown)
                }
                switch outcome {
                case .loaded(let loaded, let data):
                    let response = ReceivedResponse(loaded)
                    self.decide(response, Verdict(), body: .collected(ByteBuffer(bytes: data))) { state in
                        state.log.record(transaction(response))
                        state.cache.exempt()
                    }
                case .redirected(let redirect, let next):
                    let response = ReceivedResponse(redirect)
                    self.decide(response, Verdict(verdict: .redirect, proposed: next)) { $0.log.record(transaction(response)) }
                case .failed(let error):
                    self.exchangeFailed(error)
                }
            })
        setCancelWork({ load.stop(url: request.url) }, generation: generation)
        load.start(protocolClass, request: request, body: body)
    }
}

/// A body kept in memory, taken with what offering it to the cache needs.
typealias CollectedBody = (body: ByteBuffer?, offer: CacheOffer?, progress: ReceivedReport?)

extension LoadingTask.State {
    /// Takes the body the machine holds in memory (none when it holds a streamed one) with what
    /// offering it to the cache needs and the progress a streamed exchange held back, in one step.
    mutating func takeCollectedBody() -> CollectedBody {
        takeCollectedBody(machine.takeHeldBody().collected)
    }

    /// `body`, taken from the machine already, with what offering it to the cache needs and the
    /// progress a streamed exchange held back (no further than the bytes handed over), in one step.
    mutating func takeCollectedBody(_ body: ByteBuffer?) -> CollectedBody {
        let handedOver = Int64(body?.readableBytes ?? 0)
        return (body, cache.offer(of: response, to: request.current), counts.releaseHeldReceived(upTo: handedOver))
    }
}

extension ByteBuffer {
    /// Readable bytes from which ``readableData`` shares the buffer's memory instead of copying it.
    static let smallestSharedData = 64 * 1024

    /// The readable bytes as `Data`.
    ///
    /// At least ``smallestSharedData`` bytes that fill at least three quarters of their storage
    /// are not copied: the `Data` refers to the buffer's memory and keeps its storage alive until
    /// it is released. A copy of a large chunk costs a fresh allocation of its size, which glibc's
    /// allocator takes from new pages it must fault in and zero (above its mmap threshold, or
    /// after trimming); sharing spares that and the copy, and holds at most a third more memory
    /// than the bytes. NIO never writes into storage another reference holds. The `Data` owns its
    /// bytes, so one changed in place writes into the buffer's memory: callers hand on the `Data`
    /// and drop the buffer, so nothing else reads those bytes. Smaller or sparser bytes are copied
    /// in one step (`Data`'s initializer from a sequence of bytes casts the sequence at run time
    /// first).
    var readableData: Data {
        let shares = readableBytes >= Self.smallestSharedData && readableBytes * 4 >= storageCapacity * 3
        return withUnsafeReadableBytesWithStorageManagement { bytes, storage in
            guard let base = bytes.baseAddress else { return Data() }
            guard shares else { return Data(bytes: base, count: bytes.count) }
            let owner = storage.retain()
            return Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count,
                deallocator: .custom { _, _ in owner.release() })
        }
    }
}
