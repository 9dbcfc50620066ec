import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Basic and Digest challenges answered as URLSession answers them for Alamofire: with the
/// request's credential, else the configuration's stored one; a refused answer is not repeated.
@Suite struct HTTPAuthenticationTests {
    struct Authenticated: Decodable, Sendable, Equatable {
        let authenticated: Bool
        let user: String
    }

    /// A session with its own credential storage, so that no test sees another's credentials.
    static func session(monitor: RecordingMonitor? = nil) -> Session {
        keepAlive(Session(configuration: URLSessionConfiguration.af.ephemeral, eventMonitors: monitor.map { [$0] } ?? []))
    }

    @Test func basicWithTheRequestsCredential() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Self.session(monitor: monitor)
            let response = try await withTimeout {
                await session.request(server.url("/basic-auth/user/passwd")).authenticate(username: "user", password: "passwd")
                    .validate().serializingDecodable(Authenticated.self).response
            }
            #expect(response.value == Authenticated(authenticated: true, user: "user"))
            #expect(response.metrics?.transactionMetrics.count == 2)
            // The Authorization header goes on the wire only, as with URLSession.
            #expect(response.request?.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(await monitor.events.filter { $0 == "taskDidReceiveChallenge" }.count == 1)
        }
    }

    @Test func aWrongPasswordIsTriedOnceThenThe401IsTheResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let response = try await withTimeout {
                await Self.session(monitor: monitor).request(server.url("/basic-auth/user/passwd"))
                    .authenticate(username: "user", password: "wrong").serializingData().response
            }
            #expect(response.response?.statusCode == 401)
            // The 401's body is empty, which `responseData` refuses, as in Alamofire.
            #expect(response.error?.isResponseSerializationError == true)
            #expect(response.metrics?.transactionMetrics.count == 2)
            #expect(await monitor.events.filter { $0 == "taskDidReceiveChallenge" }.count == 2)
        }
    }

    @Test func withoutACredentialThe401IsTheResponseAtOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout {
                await Self.session().request(server.url("/basic-auth/user/passwd")).validate().serializingData().response
            }
            #expect(response.response?.statusCode == 401)
            #expect(response.error?.responseCode == 401)
            #expect(response.metrics?.transactionMetrics.count == 1)
        }
    }

    @Test(arguments: ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512-256", "SHA-512-256-sess"])
    func digestWithEveryAlgorithm(algorithm: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
            for qop in ["auth", "auth-int", "none"] {
                let value = try await withTimeout {
                    try await Self.session().request(server.url("/digest-auth/\(qop)/user/passwd/\(algorithm)")).authenticate(
                        with: credential
                    )
                    .validate().serializingDecodable(Authenticated.self).value
                }
                #expect(value == Authenticated(authenticated: true, user: "user"), "\(qop)")
            }
        }
    }

    @Test func digestAuthIntHashesAPostedBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let value = try await withTimeout {
                try await Self.session().request(
                    server.url("/digest-auth/auth-int/user/passwd/SHA-256"), method: .post, parameters: ["a": "b"]
                ).authenticate(username: "user", password: "passwd").validate().serializingDecodable(Authenticated.self).value
            }
            #expect(value.authenticated)
        }
    }

    /// A stale nonce is answered again with the new one (the credential was right), not counted
    /// as a refusal.
    @Test func aStaleDigestNonceIsAnsweredAgain() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let response = try await withTimeout {
                await Self.session(monitor: monitor).request(server.url("/digest-auth/auth/user/passwd/MD5/stale"))
                    .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Authenticated.self).response
            }
            #expect(response.value?.authenticated == true)
            #expect(response.metrics?.transactionMetrics.count == 3)
            #expect(await monitor.events.filter { $0 == "taskDidReceiveChallenge" }.count == 2)
        }
    }

    @Test func theConfigurationsStoredCredentialAnswers() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let space = URLProtectionSpace(
                host: "127.0.0.1", port: server.port, protocol: "http", realm: "Fake Realm",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            session.sessionConfiguration.urlCredentialStorage?.set(
                URLCredential(user: "user", password: "passwd", persistence: .forSession), for: space)
            let value = try await withTimeout {
                try await session.request(server.url("/basic-auth/user/passwd")).validate().serializingDecodable(Authenticated.self).value
            }
            #expect(value.authenticated)
        }
    }

    /// A `Basic` challenge without a realm finds the credential stored for the host's protection space
    /// without a realm, as URLSession on Apple platforms does.
    @Test func aRealmlessChallengeFindsTheHostsStoredCredential() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            for method in [NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodDefault] {
                let storage = try #require(session.sessionConfiguration.urlCredentialStorage)
                for (space, _) in storage.allCredentials { storage.remove(storage.allCredentials[space]!.values.first!, for: space) }
                let space = URLProtectionSpace(
                    host: "127.0.0.1", port: server.port, protocol: "http", realm: nil, authenticationMethod: method)
                storage.set(URLCredential(user: "user", password: "passwd", persistence: .forSession), for: space)
                let response = try await withTimeout {
                    await session.request(server.url("/realmless-basic-auth/user/passwd")).validate().serializingDecodable(
                        Authenticated.self
                    )
                    .response
                }
                #expect(response.value?.authenticated == true, "\(method)")
            }
        }
    }

    /// A `.forSession` credential that worked is kept for the session's later requests; a `.none`
    /// one is not.
    @Test func anAcceptedCredentialIsKeptAsItsPersistenceSays() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/basic-auth/user/passwd")
            let kept = Self.session()
            _ = try await withTimeout {
                try await kept.request(url).authenticate(username: "user", password: "passwd").validate().serializingData().value
            }
            let later = try await withTimeout { await kept.request(url).serializingData().response }
            #expect(later.response?.statusCode == 200)

            let forgotten = Self.session()
            _ = try await withTimeout {
                try await forgotten.request(url).authenticate(with: URLCredential(user: "user", password: "passwd", persistence: .none))
                    .validate().serializingData().value
            }
            let again = try await withTimeout { await forgotten.request(url).serializingData().response }
            #expect(again.response?.statusCode == 401)

            // A refused credential is not kept either.
            let refused = Self.session()
            _ = try await withTimeout {
                await refused.request(url).authenticate(username: "user", password: "no").serializingData().response
            }
            #expect(refused.sessionConfiguration.urlCredentialStorage?.allCredentials.isEmpty == true)
        }
    }

    /// The seed's manual form: an Authorization header built by hand needs no challenge.
    @Test func aManualAuthorizationHeaderIsSentAsItIs() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout {
                await Self.session().request(
                    server.url("/basic-auth/user/passwd"), headers: [.authorization(username: "user", password: "passwd")]
                ).serializingDecodable(Authenticated.self).response
            }
            #expect(response.value?.authenticated == true)
            #expect(response.metrics?.transactionMetrics.count == 1)
        }
    }
}

/// A challenge to a request whose body streams (a download, a stream request, a data request with
/// an `onHTTPResponse` handler) is answered as a collected one is: the 401's body is read first, so
/// the answer goes on the same connection, and the 401's exchange is the task's first transaction.
@Suite struct StreamedBodyChallengeTests {
    enum Kind: String, CaseIterable, Sendable {
        case download, stream, dataWithResponseHandler
    }

    @Test(arguments: Kind.allCases)
    func theAnswered401IsATransactionAndTheAnswerReusesItsConnection(kind: Kind) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = HTTPAuthenticationTests.session()
            let url = server.url("/basic-auth/user/passwd")
            let (data, metrics): (Data?, TaskMetrics?) = try await withTimeout {
                switch kind {
                case .download:
                    let response = await session.download(url).authenticate(username: "user", password: "passwd")
                        .serializingData().response
                    return (response.value, response.metrics)
                case .stream:
                    let request = session.streamRequest(url).authenticate(username: "user", password: "passwd")
                    var data = Data()
                    for await stream in request.streamTask().streamingData() {
                        if case .success(let chunk) = stream.result { data.append(chunk) }
                    }
                    return (data, request.metrics)
                case .dataWithResponseHandler:
                    let response = await session.request(url).authenticate(username: "user", password: "passwd")
                        .onHTTPResponse { _ in }.serializingData().response
                    return (response.value, response.metrics)
                }
            }
            let value = try JSONDecoder().decode(HTTPAuthenticationTests.Authenticated.self, from: try #require(data))
            #expect(value == HTTPAuthenticationTests.Authenticated(authenticated: true, user: "user"))
            let transactions = try #require(metrics?.transactionMetrics)
            #expect(transactions.map { ($0.response as? HTTPURLResponse)?.statusCode } == [401, 200])
            #expect(transactions.map(\.isReusedConnection) == [false, true])
        }
    }

    /// A refused answer leaves the second 401 as the result: a download's file holds its body (the
    /// server's is empty), read before the delegate declined.
    @Test func aDeclinedChallengesBodyIsTheDownloadsFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout {
                await HTTPAuthenticationTests.session().download(server.url("/basic-auth/user/passwd"))
                    .authenticate(username: "user", password: "wrong").serializingData(emptyResponseCodes: [401]).response
            }
            #expect(response.response?.statusCode == 401)
            #expect(response.value == Data())
            #expect(response.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } == true)
            #expect(response.metrics?.transactionMetrics.map { ($0.response as? HTTPURLResponse)?.statusCode } == [401, 401])
        }
    }
}
