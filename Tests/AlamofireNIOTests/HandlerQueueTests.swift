import AFSynchronization
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// User handlers run where Alamofire's `SessionDelegate` runs them: on the session's root queue, never
/// on one of the transport's event loops.
@Suite struct HandlerQueueTests {
    static let key = DispatchSpecificKey<String>()

    /// A root queue that can be recognised from inside a handler.
    static func rootQueue() -> DispatchQueue {
        let queue = DispatchQueue(label: "HandlerQueueTests.root")
        queue.setSpecific(key: key, value: queue.label)
        return queue
    }

    /// Whether the calling code runs on the test's root queue.
    static var onRootQueue: Bool { DispatchQueue.getSpecific(key: key) == "HandlerQueueTests.root" }

    @Test func aRedirectHandlerRunsOnTheRootQueue() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let ranOnRootQueue = Mutex<[Bool]>([])
            let handler = Redirector(
                behavior: .modify { _, request, _ in
                    ranOnRootQueue.withLock { $0.append(Self.onRootQueue) }
                    return request
                })
            let session = Session(rootQueue: Self.rootQueue(), redirectHandler: handler)
            let response = try await withTimeout { await session.request(server.url("/redirect/2")).serializingData().response }
            #expect(response.response?.statusCode == 200)
            #expect(ranOnRootQueue.withLock { $0 } == [true, true])
        }
    }

    @Test func aCachedResponseHandlerRunsOnTheRootQueue() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let ranOnRootQueue = Mutex<[Bool]>([])
            let handler = ResponseCacher(
                behavior: .modify { _, response in
                    ranOnRootQueue.withLock { $0.append(Self.onRootQueue) }
                    return response
                })
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
            let session = Session(configuration: configuration, rootQueue: Self.rootQueue(), cachedResponseHandler: handler)
            let response = try await withTimeout { await session.request(server.url("/cache/60")).serializingData().response }
            #expect(response.response?.statusCode == 200)
            #expect(ranOnRootQueue.withLock { $0 } == [true])
        }
    }
}
