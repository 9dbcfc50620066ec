import AlamofireNIO
import Foundation
import HTTPBinServer
import TestWaits
import Testing

// Compiled in the Swift 5 language mode, as much Alamofire code is. Alamofire marks its
// closure-taking API `@preconcurrency`, so such code may mutate variables its handlers capture
// without a warning; AlamofireNIO does the same. Each use below would warn otherwise, and CI fails
// on a warning.

@Suite struct CapturedVariableTests {
    @Test func handlersMutateCapturedVariables() async throws {
        try await HTTPBinServer.withServer { server in
            let queue = DispatchQueue(label: "handlers")
            var adaptations = 0
            let adapter = Adapter { request, _, completion in
                adaptations += 1
                completion(.success(request))
            }
            var redirects: [String] = []
            let redirector = Redirector.modify { _, request, _ in
                redirects.append(request.url?.path ?? "")
                return request
            }
            let session = Session(rootQueue: queue, interceptor: adapter, redirectHandler: redirector)
            var statusCodes: [Int] = []
            var progressCalls = 0
            var validations = 0
            var modifications = 0
            var streamed = 0
            _ = try await completion(within: 30) { (done: @escaping @Sendable (Bool) -> Void) in
                session.request(
                    server.url("/redirect/1"),
                    requestModifier: { request in
                        modifications += 1
                        request.timeoutInterval = 30
                    }
                )
                .downloadProgress(queue: queue) { _ in progressCalls += 1 }
                .validate { _, response, _ in
                    validations += 1
                    return .success(())
                }
                .responseData(queue: queue) { response in
                    statusCodes.append(response.response?.statusCode ?? 0)
                    done(true)
                }
            }
            _ = try await completion(within: 30) { (done: @escaping @Sendable (Bool) -> Void) in
                session.streamRequest(server.url("/stream/3")).responseStream(on: queue) { stream in
                    if case .stream = stream.event { streamed += 1 }
                    if case .complete = stream.event { done(true) }
                }
            }
            queue.sync {
                #expect(statusCodes == [200])
                #expect(progressCalls >= 1)
                #expect(validations == 1)
                #expect(modifications == 1)
                #expect(adaptations == 2)
                #expect(redirects == ["/get"])
                #expect(streamed >= 1)
            }
            withExtendedLifetime(session) {}
        }
    }
}
