import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The resume-data format and what a response to a continued request means, as plain values.
@Suite struct DownloadResumptionTests {
    let directory = URL(fileURLWithPath: "/tmp/resume-tests")

    func resumption(offset: Int64 = 100, entityTag: String? = "\"v1\"", lastModified: String? = nil) -> DownloadResumption {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:8080/file?x=1")!)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        return DownloadResumption(
            request: request, file: directory.appendingPathComponent("AlamofireNIO_00000000-0000-0000-0000-000000000000.tmp"),
            offset: offset, entityTag: entityTag,
            lastModified: lastModified, expectedTotalBytes: 1000)
    }

    func response(_ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: "http://127.0.0.1:8080/file")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    @Test func resumeDataRoundTrips() throws {
        let original = resumption(lastModified: "Wed, 21 Oct 2026 07:28:00 GMT")
        let data = original.encoded()
        let fields = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(fields["format"] as? String == "AlamofireNIO.ResumeData")
        #expect(fields["version"] as? Int == 1)
        #expect(fields["temporaryFileName"] as? String == "AlamofireNIO_00000000-0000-0000-0000-000000000000.tmp")
        #expect(fields["bytesReceived"] as? Int == 100)
        #expect(fields["headers"] as? [[String]] == [["Authorization", "Bearer t"]])
        let decoded = try DownloadResumption(decoding: data, temporaryDirectory: directory)
        #expect(decoded == original)
    }

    @Test func theFileIsLookedForInTheTemporaryDirectoryOnly() throws {
        let decoded = try DownloadResumption(decoding: resumption().encoded(), temporaryDirectory: URL(fileURLWithPath: "/elsewhere"))
        #expect(decoded.file.path == "/elsewhere/AlamofireNIO_00000000-0000-0000-0000-000000000000.tmp")
    }

    @Test func aMatchingPartialResponseIsAppended() {
        let answer = response(206, ["Content-Range": "bytes 100-999/1000", "ETag": "\"v1\""])
        #expect(resumption().continuation(after: answer) == .append(total: 1000))
        let unknownTotal = response(206, ["Content-Range": "bytes 100-999/*"])
        #expect(resumption().continuation(after: unknownTotal) == .append(total: nil))
    }

    @Test func anotherRangeOrEntityIsAskedForAgain() {
        #expect(resumption().continuation(after: response(206, ["Content-Range": "bytes 0-999/1000"])) == .askAgain)
        #expect(resumption().continuation(after: response(206, ["Content-Range": "bytes 100-999/1000", "ETag": "\"v2\""])) == .askAgain)
        #expect(resumption().continuation(after: response(206, [:])) == .askAgain)
        #expect(resumption().continuation(after: response(206, ["Content-Range": "bytes 100-99/1000"])) == .askAgain)
        #expect(resumption().continuation(after: response(416, ["Content-Range": "bytes */50"])) == .askAgain)
        let byDate = resumption(entityTag: nil, lastModified: "Wed, 21 Oct 2026 07:28:00 GMT")
        #expect(
            byDate.continuation(
                after: response(206, ["Content-Range": "bytes 100-999/1000", "Last-Modified": "Thu, 22 Oct 2026 07:28:00 GMT"]))
                == .askAgain)
    }

    @Test func anyOtherResponseStartsOver() {
        #expect(resumption().continuation(after: response(200, [:])) == .startOver)
        #expect(resumption().continuation(after: response(404, [:])) == .startOver)
    }

    @Test func onlyAGetWithAStrongValidatorCanBeResumed() {
        let file = directory.appendingPathComponent("f")
        var get = URLRequest(url: URL(string: "http://127.0.0.1/f")!)
        let strong = DownloadResumption.possible(
            request: get, response: response(200, ["ETag": "\"a\""]), file: file, offset: 0, expectedTotalBytes: nil, previous: nil)
        #expect(strong?.entityTag == "\"a\"")
        let weak = DownloadResumption.possible(
            request: get, response: response(200, ["ETag": "W/\"a\""]), file: file, offset: 0, expectedTotalBytes: nil, previous: nil)
        #expect(weak == nil)
        let dated = DownloadResumption.possible(
            request: get, response: response(200, ["Last-Modified": "d"]), file: file, offset: 0, expectedTotalBytes: nil, previous: nil)
        #expect(dated?.lastModified == "d")
        get.httpMethod = "POST"
        let post = DownloadResumption.possible(
            request: get, response: response(200, ["ETag": "\"a\""]), file: file, offset: 0, expectedTotalBytes: nil, previous: nil)
        #expect(post == nil)
    }

    @Test func aPartialResponseKeepsThePreviousValidators() {
        let get = URLRequest(url: URL(string: "http://127.0.0.1/f")!)
        let continued = DownloadResumption.possible(
            request: get, response: response(206, ["Content-Range": "bytes 100-999/1000"]), file: directory, offset: 100,
            expectedTotalBytes: 1000, previous: resumption())
        #expect(continued?.entityTag == "\"v1\"")
    }

    @Test func contentRangesAreParsedStrictly() {
        #expect(DownloadResumption.parseContentRange("bytes 0-9/10")?.first == 0)
        #expect(DownloadResumption.parseContentRange("bytes 5-9/10")?.total == 10)
        #expect(DownloadResumption.parseContentRange("bytes 5-9/*")?.total == nil)
        #expect(DownloadResumption.parseContentRange("bytes 5-9/9") == nil)
        #expect(DownloadResumption.parseContentRange("items 5-9/10") == nil)
        #expect(DownloadResumption.parseContentRange("bytes -9/10") == nil)
        #expect(DownloadResumption.parseContentRange("bytes */10") == nil)
    }

    @Test func aRestartSendsTheRequestAgain() {
        var machine = LoadingTaskStateMachine()
        _ = machine.resume(at: LoadingTaskStateMachineTests.start)
        _ = machine.cacheMissed()
        #expect(machine.restartRequested() == .startExchange(hop: 1))
        #expect(machine.state == .exchanging(hop: 1))
        var cancelled = LoadingTaskStateMachine()
        _ = cancelled.resume(at: LoadingTaskStateMachineTests.start)
        _ = cancelled.cacheMissed()
        // Cancelled while the dropped body was read: the exchange reports, and the task ends.
        #expect(cancelled.cancel() == .cancelExchange)
        #expect(cancelled.restartRequested() == .complete(.cancelled))
        #expect(cancelled.restartRequested() == .none)
        var deciding = LoadingTaskStateMachine()
        _ = deciding.resume(at: LoadingTaskStateMachineTests.start)
        #expect(deciding.restartRequested() == .none)
    }
}
