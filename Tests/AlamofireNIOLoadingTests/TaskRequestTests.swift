import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request a task sends next and its body, as a value: redirects replace them hop by hop.
@Suite struct TaskRequestTests {
    static func request(_ url: String, method: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        return request
    }

    @Test func aRedirectKeepingTheMethodKeepsTheBodyAndSaysWhetherItLeavesTheOrigin() {
        var task = TaskRequest(Self.request("http://127.0.0.1:8080/a", method: "POST"), body: .data(Data("up".utf8)))
        let sameOrigin = task.follow(Self.request("http://127.0.0.1:8080/b", method: "POST"))
        #expect(sameOrigin == (leavesOrigin: false, needsBodyStream: false))
        #expect(task.current.url?.path == "/b")
        #expect(task.bodyInMemory == Data("up".utf8))
        // Another port is another origin.
        let otherOrigin = task.follow(Self.request("http://127.0.0.1:8081/c", method: "POST"))
        #expect(otherOrigin == (leavesOrigin: true, needsBodyStream: false))
        #expect(task.current.url?.absoluteString == "http://127.0.0.1:8081/c")
        #expect(task.bodyInMemory == Data("up".utf8))
    }

    @Test func aRedirectChangingTheMethodDropsTheUploadsBody() {
        var task = TaskRequest(Self.request("http://127.0.0.1/a", method: "POST"), body: .file(URL(fileURLWithPath: "/tmp/x")))
        #expect(task.bodyInMemory == nil)
        #expect(task.follow(Self.request("http://127.0.0.1/b", method: "GET")) == (leavesOrigin: false, needsBodyStream: false))
        #expect(task.body == nil)
        // With no upload's body, the request's own (none here) is the body in memory.
        #expect(task.bodyInMemory == Data())
    }

    @Test func aStreamBodyNeedsANewStreamForEachHopThatRepeatsIt() {
        var task = TaskRequest(
            Self.request("http://127.0.0.1/a", method: "PUT"), body: .stream(InputStream(data: Data("s".utf8))))
        #expect(task.needsBodyStream)
        #expect(task.bodyInMemory == nil)
        #expect(task.follow(Self.request("http://127.0.0.1/b", method: "PUT")) == (leavesOrigin: false, needsBodyStream: true))
        task.replaceBodyStream(with: InputStream(data: Data("t".utf8)))
        #expect(task.needsBodyStream)
        // A 303 to a GET sends no body: nothing to ask for.
        #expect(task.follow(Self.request("http://127.0.0.1/c", method: "GET")) == (leavesOrigin: false, needsBodyStream: false))
        #expect(!task.needsBodyStream)
    }
}
