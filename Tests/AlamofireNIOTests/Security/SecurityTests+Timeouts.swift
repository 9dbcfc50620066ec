import AFSynchronization
import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's timeout bounds connecting, the TLS handshake and the wait for a connection, per
/// request: another request's timeout never bounds it.
extension SecurityTests {
    /// As Alamofire's `RequestInstanceInterceptorTests`: the first attempt's timeout is 0.1 ms, the
    /// retry's a normal one, and the retry succeeds.
    @Test(arguments: Wire.allCases)
    func aRetryWithANormalTimeoutSucceedsAfterATinyOne(wire: Wire) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let adaptations = Mutex(0)
            let interceptor = Interceptor(
                adaptHandler: { request, _, completion in
                    // The first attempt gets 0.1 ms, the retry a normal timeout.
                    let first = adaptations.withLock { count in
                        count += 1
                        return count == 1
                    }
                    var request = request
                    request.timeoutInterval = first ? 0.0001 : 10
                    completion(.success(request))
                },
                retryHandler: { request, _, error, completion in
                    let timedOut = (error.asAFError?.underlyingError as? URLError)?.code == .timedOut
                    completion(timedOut && request.retryCount == 0 ? .retry : .doNotRetry)
                })
            let session = try Self.session(wire, server, interceptor: interceptor)
            let request = session.request(try Self.url(wire, server, "/get"))
            let response = try await withTimeout { await request.serializingData().response }
            #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
            #expect(request.retryCount == 1)
        }
    }

    @Test func aRequestQueuedBehindABusyConnectionTimesOutOnItsOwnTimeout() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.httpMaximumConnectionsPerHost = 1
            let session = Session(configuration: configuration, eventMonitors: [])
            let busy = session.request(server.url("/hold/busy")).serializingData()
            try await server.waitUntil { $0.heldRequests["busy"] == 1 }
            let queued = try await withTimeout {
                await session.request(server.url("/get")) { $0.timeoutInterval = 0.2 }.serializingData().response
            }
            #expect((queued.error?.underlyingError as? URLError)?.code == .timedOut)
            #expect(server.statistics.totalRequests == 1, "the queued request never reached the server")
            server.release("busy")
            #expect(await busy.response.response?.statusCode == 200)
        }
    }

    @Test func theRequestTimeoutBoundsATLSHandshakeThatNeverEnds() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let session = Session(eventMonitors: [])
        let response = try await withTimeout {
            await session.request("https://127.0.0.1:\(listener.port)/get") { $0.timeoutInterval = 0.3 }.serializingData().response
        }
        #expect((response.error?.underlyingError as? URLError)?.code == .timedOut)
    }
}
