// Written as libraries built on Alamofire write it (Moya has 17 module-qualified names and scoped
// imports): on Linux these resolve against AlamofireNIO's `Alamofire` product with no change.
@_spi(WebSocket) import Alamofire
import Foundation
import Testing

import enum Alamofire.AFError
import struct Alamofire.HTTPHeaders
import protocol Alamofire.RequestInterceptor
import class Alamofire.Session

/// An adapter a library would write against Alamofire's protocol, named through the module.
struct BearerAdapter: Alamofire.RequestInterceptor {
    let token: String

    func adapt(_ urlRequest: URLRequest, for session: Alamofire.Session, completion: @escaping (Result<URLRequest, any Error>) -> Void) {
        var request = urlRequest
        request.headers.add(.authorization(bearerToken: token))
        completion(.success(request))
    }
}

@Suite struct QualifiedNameTests {
    @Test func moduleQualifiedNamesAndScopedImportsResolve() async throws {
        let error: AFError = Alamofire.AFError.explicitlyCancelled
        #expect(error.isExplicitlyCancelledError)
        let headers: Alamofire.HTTPHeaders = [.accept("application/json")]
        #expect(headers["Accept"] == "application/json")
        #expect(Alamofire.HTTPMethod.patch.rawValue == "PATCH")

        let adapted = try await withCheckedThrowingContinuation { continuation in
            BearerAdapter(token: "t").adapt(
                URLRequest(url: URL(string: "https://itunes.apple.com/search")!), for: Alamofire.Session.default
            ) {
                continuation.resume(with: $0)
            }
        }
        #expect(adapted.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    /// The WebSocket requests are Alamofire's SPI, reached the same way.
    @Test func theWebSocketSPIIsReachedThroughTheAlamofireModule() {
        let type: Alamofire.WebSocketRequest.Type = WebSocketRequest.self
        #expect(String(describing: type) == "WebSocketRequest")
    }
}
