import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which file a download task owns and what becomes of it, as a plain value: no file is touched.
@Suite struct DownloadFileStateTests {
    let directory = URL(fileURLWithPath: "/tmp/download-file-state")
    let request = URLRequest(url: URL(string: "http://127.0.0.1:8080/file")!)

    func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    func resumption(_ name: String, offset: Int64 = 100, heldByUser: Bool) -> DownloadResumption {
        var resumption = DownloadResumption(
            request: request, file: file(name), offset: offset, entityTag: "\"v1\"", lastModified: nil, expectedTotalBytes: 1000)
        resumption.isHeldByUser = heldByUser
        return resumption
    }

    func response(_ status: Int, _ headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    /// The task moves the partial file to `taken`, as `continueDownload` does.
    func taking(_ state: inout DownloadFileState, _ resumption: DownloadResumption, as taken: String) -> DownloadResumption {
        var moved = resumption
        moved.file = file(taken)
        state.took(moved, from: resumption.file)
        return moved
    }

    @Test func theUsersFileIsNotTheTasksUntilTaken() {
        var state = DownloadFileState(continuing: resumption("user", heldByUser: true))
        #expect(state.file == nil)
        #expect(state.userFileToRestore == nil)
        // Dropped unstarted: nothing to remove.
        #expect(state.release().file == nil)
    }

    @Test func aRetrysPartialFileIsTheTasksFromTheStart() {
        var state = DownloadFileState(continuing: resumption("retry", heldByUser: false))
        #expect(state.file == file("retry"))
        #expect(state.userFileToRestore == nil)
        #expect(state.release().file == file("retry"))
        #expect(state.file == nil)
    }

    @Test func aTakenUserFileKeepsItsFirstNameAcrossHops() {
        var state = DownloadFileState(continuing: resumption("user", heldByUser: true))
        let first = taking(&state, resumption("user", heldByUser: true), as: "taken-1")
        #expect(state.file == file("taken-1"))
        // A redirect's hop takes the file again; the name to give back stays the user's.
        _ = taking(&state, first, as: "taken-2")
        #expect(state.userFileToRestore?.taken == file("taken-2"))
        #expect(state.userFileToRestore?.original == file("user"))
    }

    @Test func aRefusedRangeGivesUpThePartialFile() {
        var state = DownloadFileState(continuing: resumption("user", heldByUser: true))
        _ = taking(&state, resumption("user", heldByUser: true), as: "taken")
        #expect(state.rangeRefused() == file("taken"))
        #expect(state.resumption == nil)
        #expect(state.resumable == nil)
        #expect(state.file == nil)
    }

    @Test func aForgottenResumptionReleasesOnlyItsOwnFile() {
        let retry = resumption("retry", heldByUser: false)
        var state = DownloadFileState(continuing: retry)
        state.forget(retry)
        #expect(state.file == nil)
        #expect(state.resumption == nil)
        let plan = state.plan(for: response(200), streamed: true, restoredUserFile: false, request: request) { file("new") }
        #expect(plan.file == file("new"))
        #expect(plan.offset == nil)
    }

    @Test func aMatchingPartialResponseContinuesTheTakenFileAndReportsItsOffsetOnce() {
        var state = DownloadFileState(continuing: resumption("user", heldByUser: true))
        _ = taking(&state, resumption("user", heldByUser: true), as: "taken")
        let partial = response(206, ["Content-Range": "bytes 100-999/1000", "Content-Length": "900", "ETag": "\"v1\""])
        let plan = state.plan(for: partial, streamed: true, restoredUserFile: false, request: request) { file("new") }
        #expect(plan.file == file("taken"))
        #expect(plan.offset == 100)
        #expect(plan.expectedTotalBytes == 1000)
        #expect(plan.reportedOffset == 100)
        #expect(plan.resumable?.offset == 100)
        #expect(state.file == file("taken"))
        #expect(state.resumption == nil)
        // A later plan (a retry of the body) reports nothing again.
        let again = state.plan(for: response(200, ["ETag": "\"v1\""]), streamed: true, restoredUserFile: false, request: request) {
            file("new")
        }
        #expect(again.reportedOffset == nil)
        #expect(again.file == file("taken"))
        #expect(again.offset == nil)
    }

    @Test func anErrorAnswerThatGaveTheUsersFileBackWritesANewFile() {
        var state = DownloadFileState(continuing: resumption("user", heldByUser: true))
        _ = taking(&state, resumption("user", heldByUser: true), as: "taken")
        let plan = state.plan(for: response(503), streamed: true, restoredUserFile: true, request: request) { file("new") }
        #expect(plan.file == file("new"))
        #expect(plan.offset == nil)
        #expect(plan.reportedOffset == 0)
        #expect(plan.resumable == nil)
        #expect(state.file == file("new"))
    }

    @Test func aHandedOverFileIsNoLongerTheTasks() {
        var state = DownloadFileState()
        _ = state.plan(for: response(200, ["ETag": "\"v2\""]), streamed: true, restoredUserFile: false, request: request) { file("new") }
        #expect(state.file == file("new"))
        #expect(state.resumable?.entityTag == "\"v2\"")
        state.handOver()
        #expect(state.release().file == nil)
    }

    @Test func aPartialFileIsKeptAfterAFailedExchangeOrACancelThatAskedForResumeData() {
        #expect(DownloadFileState.keepsPartialFile(after: .exchangeFailed, resumeDataRequested: false))
        #expect(DownloadFileState.keepsPartialFile(after: .cancelled, resumeDataRequested: true))
        #expect(!DownloadFileState.keepsPartialFile(after: .cancelled, resumeDataRequested: false))
        #expect(!DownloadFileState.keepsPartialFile(after: .tooManyRedirects, resumeDataRequested: true))
        #expect(!DownloadFileState.keepsPartialFile(after: nil, resumeDataRequested: true))
    }
}
