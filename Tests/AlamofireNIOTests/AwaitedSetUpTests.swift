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

/// A request awaited from a Swift task (`serializingData()`) whose set-up runs none of the user's
/// code is set up on the awaiting thread, without waking the root queue; every other request is set
/// up on the root queue, where Alamofire sets it up. The root queue is held suspended while the
/// awaitable task is made, so a set-up left to it cannot have happened yet.
@Suite struct AwaitedSetUpTests {
    static let key = DispatchSpecificKey<Bool>()

    static func rootQueue() -> DispatchQueue {
        let queue = DispatchQueue(label: "AwaitedSetUpTests.root")
        queue.setSpecific(key: key, value: true)
        return queue
    }

    /// Makes the request and its awaitable task while the root queue is suspended; says whether the
    /// request had its task by then, then lets the root queue go and awaits the body.
    static func setUpBeforeTheRootQueueRuns(
        _ session: Session, _ rootQueue: DispatchQueue, _ makeRequest: (Session) -> DataRequest
    ) async throws -> (setUp: Bool, body: Data?) {
        rootQueue.suspend()
        let request = makeRequest(session)
        let awaitable = request.serializingData()
        let setUp = request.task != nil
        rootQueue.resume()
        let response = try await withTimeout { await awaitable.response }
        return (setUp, response.data)
    }

    @Test func aPlainRequestAwaitedFromATaskIsSetUpOnTheAwaitingThread() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let rootQueue = Self.rootQueue()
            let session = Session(rootQueue: rootQueue)
            let url = server.url("/bytes/16")
            let fromURL = try await Self.setUpBeforeTheRootQueueRuns(session, rootQueue) { $0.request(url) }
            #expect(fromURL.setUp)
            #expect(fromURL.body?.count == 16)
            let fromString = try await Self.setUpBeforeTheRootQueueRuns(session, rootQueue) { $0.request(url.absoluteString) }
            #expect(fromString.setUp)
            #expect(fromString.body?.count == 16)
        }
    }

    /// The user's code in a set-up: a modifier, parameters for an encoding, an adapter, a
    /// `URLRequestConvertible` of the user's, a request queue.
    enum UserCode: CaseIterable, Sendable {
        case requestModifier, parameters, requestInterceptor, sessionInterceptor, convertible, requestQueue
    }

    /// Where each of a convertible's calls ran: on the root queue or not.
    final class Places: Sendable {
        let onRootQueue = Mutex<[Bool]>([])
    }

    struct Convertible: URLRequestConvertible {
        let url: URL
        let places: Places

        func asURLRequest() throws -> URLRequest {
            places.onRootQueue.withLock { $0.append(DispatchQueue.getSpecific(key: AwaitedSetUpTests.key) == true) }
            return URLRequest(url: url)
        }
    }

    @Test(arguments: UserCode.allCases)
    func aSetUpThatRunsTheUsersCodeStaysOnTheRootQueue(_ code: UserCode) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let rootQueue = Self.rootQueue()
            let adapter = Adapter { request, _, completion in completion(.success(request)) }
            let session =
                switch code {
                case .sessionInterceptor: Session(rootQueue: rootQueue, interceptor: adapter)
                case .requestQueue: Session(rootQueue: rootQueue, requestQueue: DispatchQueue(label: "AwaitedSetUpTests.requests"))
                default: Session(rootQueue: rootQueue)
                }
            let url = server.url("/bytes/16")
            let places = Places()
            let result = try await Self.setUpBeforeTheRootQueueRuns(session, rootQueue) { session in
                switch code {
                case .requestModifier: session.request(url, requestModifier: { $0.timeoutInterval = 30 })
                case .parameters: session.request(url, parameters: ["a": "1"])
                case .requestInterceptor: session.request(url, interceptor: adapter)
                case .convertible: session.request(Convertible(url: url, places: places))
                case .sessionInterceptor, .requestQueue: session.request(url)
                }
            }
            #expect(!result.setUp)
            #expect(result.body?.count == 16)
            #expect(places.onRootQueue.withLock { $0 } == (code == .convertible ? [true] : []))
        }
    }

    @Test func aRequestAwaitedFromOutsideATaskIsSetUpOnTheRootQueue() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let rootQueue = Self.rootQueue()
            let session = Session(rootQueue: rootQueue)
            let url = server.url("/bytes/16")
            rootQueue.suspend()
            // A Dispatch thread runs no Swift task: its awaitable task leaves the set-up to the root queue.
            let (request, awaitable) = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    let request = session.request(url)
                    continuation.resume(returning: (request, request.serializingData()))
                }
            }
            #expect(request.task == nil)
            rootQueue.resume()
            let response = try await withTimeout { await awaitable.response }
            #expect(response.data?.count == 16)
        }
    }

    @Test func aRequestAwaitedFromATaskOnTheRootQueueIsSetUpAfterTheRootQueuesWork() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let rootQueue = Self.rootQueue()
            let session = Session(rootQueue: rootQueue)
            let url = server.url("/bytes/16")
            // `sync` runs the block on this task's thread, on the root queue: the set-up waits for the block to end.
            let (setUpInBlock, awaitable) = rootQueue.sync {
                let request = session.request(url)
                let awaitable = request.serializingData()
                return (request.task != nil, awaitable)
            }
            #expect(!setUpInBlock)
            let response = try await withTimeout { await awaitable.response }
            #expect(response.data?.count == 16)
        }
    }
}
