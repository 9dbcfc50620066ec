import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RetryPolicy and ConnectionLostRetryPolicy: Alamofire 5.12's defaults, rules and backoff.
@Suite struct RetryPolicyTests {
    /// Records what the policy answers before the session acts on it.
    final class RecordingPolicy: RetryPolicy, @unchecked Sendable {
        let answers = OrderRecorder()

        override func retry(
            _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
        ) {
            super.retry(request, for: session, dueTo: error) { result in
                self.answers.append("\(result)")
                completion(result)
            }
        }
    }

    /// A request whose `URLRequest` exists but which never runs, for asking `shouldRetry` directly.
    static func idleRequest(_ method: HTTPMethod) -> DataRequest {
        // Set up eagerly, on the root queue: its URLRequest exists once that queue has run, and it never starts.
        let session = Session(startRequestsImmediately: false, requestSetup: .eager)
        let request = session.request("http://127.0.0.1:1/", method: method)
        session.rootQueue.sync {}
        return request
    }

    @Test func defaultsAreAlamofires() {
        let policy = RetryPolicy()
        #expect(policy.retryLimit == 2)
        #expect(policy.exponentialBackoffBase == 2)
        #expect(policy.exponentialBackoffScale == 0.5)
        #expect(policy.retryableHTTPMethods == [.delete, .get, .head, .options, .put, .trace])
        #expect(policy.retryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        #expect(
            policy.retryableURLErrorCodes == [
                .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse, .callIsActive,
                .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed, .dnsLookupFailed,
                .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete, .internationalRoamingOff, .networkConnectionLost,
                .notConnectedToInternet, .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid, .timedOut,
            ])
        let connectionLost = ConnectionLostRetryPolicy()
        #expect(connectionLost.retryableHTTPStatusCodes.isEmpty)
        #expect(connectionLost.retryableURLErrorCodes == [.networkConnectionLost])
        #expect(connectionLost.retryableHTTPMethods == RetryPolicy.defaultRetryableHTTPMethods)
    }

    @Test func everyDefaultURLErrorCodeIsRetriedBareOrInsideAnAFError() {
        let policy = RetryPolicy()
        let request = Self.idleRequest(.get)
        for code in RetryPolicy.defaultRetryableURLErrorCodes {
            #expect(policy.shouldRetry(request: request, dueTo: URLError(code)), "\(code)")
            #expect(policy.shouldRetry(request: request, dueTo: AFError.sessionTaskFailed(error: URLError(code))), "\(code)")
        }
        for code in [URLError.Code.cancelled, .badURL, .httpTooManyRedirects, .serverCertificateUntrusted, .cannotCreateFile, .unknown] {
            #expect(!policy.shouldRetry(request: request, dueTo: AFError.sessionTaskFailed(error: URLError(code))), "\(code)")
        }
        #expect(!policy.shouldRetry(request: request, dueTo: AFError.explicitlyCancelled))
    }

    @Test func onlyRetryableMethodsAreRetried() {
        let policy = RetryPolicy()
        let failure = AFError.sessionTaskFailed(error: URLError(.timedOut))
        for method in [HTTPMethod.delete, .get, .head, .options, .put, .trace] {
            #expect(policy.shouldRetry(request: Self.idleRequest(method), dueTo: failure), "\(method)")
        }
        for method in [HTTPMethod.post, .patch, .connect] {
            #expect(!policy.shouldRetry(request: Self.idleRequest(method), dueTo: failure), "\(method)")
        }
    }

    /// Each default status code, end to end: two retries, then the response; the backoff scaled
    /// down so the test does not wait.
    @Test(arguments: [408, 500, 502, 503, 504])
    func defaultStatusCodesAreRetriedUpToTheLimit(code: Int) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let policy = RecordingPolicy(exponentialBackoffScale: 0.001)
            let request = keepAlive(Session(interceptor: policy)).request(server.url("/status/\(code)")).validate()
            let response = await request.serializingData().response
            #expect(response.error?.responseCode == code)
            #expect(request.retryCount == 2)
            // The last failure is asked about twice: once for the load, once for the serializer that
            // fails with it, as Alamofire asks.
            #expect(policy.answers.values == ["retryWithDelay(0.001)", "retryWithDelay(0.002)", "doNotRetry", "doNotRetry"])
        }
    }

    @Test func aStatusCodeOutsideTheSetAndAPostAreNotRetried() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let policy = RecordingPolicy(exponentialBackoffScale: 0.001)
            let session = Session(interceptor: policy)
            let notFound = session.request(server.url("/status/404")).validate()
            #expect(await notFound.serializingData().response.error?.responseCode == 404)
            #expect(notFound.retryCount == 0)
            let post = session.request(server.url("/status/503"), method: .post).validate()
            #expect(await post.serializingData().response.error?.responseCode == 503)
            #expect(post.retryCount == 0)
            // Each is asked about by its load and by its serializer.
            #expect(policy.answers.values == ["doNotRetry", "doNotRetry", "doNotRetry", "doNotRetry"])
        }
    }

    /// The default backoff, on a manual clock: 0.5 s, then 1 s; each retry is sent only once its
    /// delay has passed.
    @Test func theDefaultBackoffDoublesFromHalfASecond() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let policy = RecordingPolicy()
            let session = keepAlive(Session(interceptor: policy))
            let clock = ManualScheduler()
            session.delayScheduler = clock
            let request = session.request(server.url("/status/503")).validate()
            let task = request.serializingData()
            let first = try await clock.next()
            #expect(first.delay == 0.5)
            #expect(request.retryCount == 0 && request.tasks.count == 1)
            first.fire()
            let second = try await clock.next()
            #expect(second.delay == 1.0)
            #expect(request.retryCount == 1 && request.tasks.count == 2)
            second.fire()
            let response = try await withTimeout { await task.response }
            #expect(response.error?.responseCode == 503)
            #expect(request.retryCount == 2 && request.tasks.count == 3)
            #expect(policy.answers.values == ["retryWithDelay(0.5)", "retryWithDelay(1.0)", "doNotRetry", "doNotRetry"])
            #expect(clock.pendingCount == 0)
        }
    }

    /// A cancel during an hour's backoff ends the request at once, with no retry after it. As in
    /// Alamofire, the attempt's error stays (the retry had not begun) and the count is unchanged.
    @Test func aCancelDuringTheBackoffEndsTheRequestWithoutARetry() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let policy = RecordingPolicy(exponentialBackoffScale: 3600)
            let session = keepAlive(Session(interceptor: policy))
            let clock = ManualScheduler()
            session.delayScheduler = clock
            let request = session.request(server.url("/status/503")).validate()
            let task = request.serializingData()
            let backoff = try await clock.next()
            #expect(backoff.delay == 3600)
            request.cancel()
            let response = try await withTimeout { await task.response }
            #expect(response.error?.responseCode == 503)
            #expect(request.isCancelled)
            // The hour passes: the cancelled request is not sent again.
            backoff.fire()
            let passed: Void = try await completion { done in session.rootQueue.async { done(()) } }
            _ = passed
            #expect(request.retryCount == 0)
            #expect(request.tasks.count == 1)
            #expect(policy.answers.values == ["retryWithDelay(3600.0)"])
            #expect(request.requests.count == 2)  // the initial and the adapted request, of the one attempt
        }
    }

    @Test func aRefusedConnectionIsRetried() async throws {
        let policy = RecordingPolicy(exponentialBackoffScale: 0.001)
        // Port 1 on loopback: nothing listens there.
        let request = keepAlive(Session(interceptor: policy)).request("http://127.0.0.1:1/")
        let response = await request.serializingData().response
        #expect((response.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
        #expect(request.retryCount == 2)
    }

    @Test func connectionLostRetryPolicyRetriesOnlyALostConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(interceptor: .connectionLostRetryPolicy(exponentialBackoffScale: 0.001))
            let lost = session.request(server.faultURL("/close"))
            let response = await lost.serializingData().response
            #expect((response.error?.underlyingError as? URLError)?.code == .networkConnectionLost)
            #expect(lost.retryCount == 2)
            let failing = session.request(server.url("/status/503")).validate()
            #expect(await failing.serializingData().response.error?.responseCode == 503)
            #expect(failing.retryCount == 0)
        }
    }

    @Test func aBackoffBaseBelowTwoCountsAsTwo() {
        #expect(RetryPolicy(exponentialBackoffBase: 0).exponentialBackoffBase == 2)
        #expect(ConnectionLostRetryPolicy(exponentialBackoffBase: 1).exponentialBackoffBase == 2)
        #expect(RetryPolicy(exponentialBackoffBase: 3).exponentialBackoffBase == 3)
    }

    @Test func theFactoriesMakeConfiguredPolicies() {
        let policy: RetryPolicy = .retryPolicy(retryLimit: 5, retryableHTTPStatusCodes: [429])
        #expect(policy.retryLimit == 5)
        #expect(policy.retryableHTTPStatusCodes == [429])
        let connectionLost: ConnectionLostRetryPolicy = .connectionLostRetryPolicy(retryLimit: 1)
        #expect(connectionLost.retryLimit == 1)
    }
}
