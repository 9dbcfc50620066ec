import Foundation
import HTTPBinServer
import TestWaits
import Testing

@_spi(WebSocket) @testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request head the caller got wrong (a control byte in a header value, a name or a method that
/// is not an HTTP token, a WebSocket subprotocol that could split its header) fails before anything
/// is sent, as `sessionTaskFailed` with `URLError(.badURL)`: never sent, never retried, never
/// blamed on the server.
extension SecurityTests {
    /// What is wrong with a request, by its place in the head.
    enum BadHead: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case nulInValue
        case lineBreakInValue
        case bareCarriageReturnInValue
        case spaceInName
        case colonInName
        case requestLineInMethod
        case separatorInMethod

        var testDescription: String { rawValue }

        var method: HTTPMethod {
            switch self {
            case .requestLineInMethod: HTTPMethod(rawValue: "GET / HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET")
            case .separatorInMethod: HTTPMethod(rawValue: "GE(T)")
            default: .get
            }
        }

        var headers: HTTPHeaders {
            switch self {
            case .nulInValue: ["X-Token": "abc\u{0}def"]
            case .lineBreakInValue: ["X-Token": "abc\r\nX-Injected: 1"]
            case .bareCarriageReturnInValue: ["X-Token": "abc\rdef"]
            case .spaceInName: ["X Token": "abc"]
            case .colonInName: ["X-Token:": "abc"]
            case .requestLineInMethod, .separatorInMethod: []
            }
        }
    }

    @Test(arguments: Wire.allCases, BadHead.allCases)
    func aBadRequestHeadFailsBeforeAnythingIsSent(wire: Wire, bad: BadHead) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(wire, server)
            let url = try Self.url(wire, server, "/anything")
            let response = try await withTimeout {
                await session.request(url, method: bad.method, headers: bad.headers).serializingData().response
            }
            guard case .sessionTaskFailed(let error as URLError) = response.error else {
                Issue.record("expected sessionTaskFailed(URLError), got \(String(describing: response.error))")
                return
            }
            #expect(error.code == .badURL)
            #expect(response.response == nil)
            #expect(server.statistics.acceptedConnections == 0)
        }
    }

    /// A good head next to a bad one still goes: the check refuses only what is wrong.
    @Test func tabsAndBytesAboveASCIIInAValueAreSent() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(.http1, server)
            let headers: HTTPHeaders = ["X-Token": "a\tb", "X-Name": "Zoë"]
            let response = try await withTimeout {
                await session.request(server.url("/headers"), headers: headers).serializingDecodable([String: [String: String]].self)
                    .response
            }
            let echoed = try #require(response.value?["headers"])
            #expect(echoed["X-Token"] == "a\tb")
            #expect(echoed["X-Name"] == "Zoë")
        }
    }

    /// A subprotocol is a token too: one holding a comma or CR/LF would split the header.
    @Test(arguments: ["chat\r\nX-Injected: 1", "chat, superchat", ""])
    func aBadWebSocketSubprotocolFailsBeforeAnythingIsSent(subprotocol: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(eventMonitors: [])
            defer { withExtendedLifetime(session) {} }
            let url = try #require(URL(string: "ws://127.0.0.1:\(server.port)/ws"))
            let task = session.webSocketRequest(to: url, configuration: .protocol(subprotocol)).webSocketTask()
            let completion = try await withTimeout { () -> WebSocketRequest.Completion? in
                for await event in task.streamingMessageEvents() {
                    if case .completed(let completion) = event.kind { return completion }
                }
                return nil
            }
            let error = try #require(completion?.error)
            #expect((error.underlyingError as? URLError)?.code == .badURL, "\(error)")
            #expect(server.statistics.acceptedConnections == 0)
        }
    }
}
