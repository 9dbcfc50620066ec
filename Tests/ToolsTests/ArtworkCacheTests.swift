import AlamofireNIO
import Foundation
import HTTPBinServer
import StoreSearchKit
import TestWaits
import Testing

/// `ArtworkCache`: downloaded once with `download(...)`, reused from the directory, cancellable.
@Suite struct ArtworkCacheTests {
    /// The PNG signature every artwork file starts with.
    static let pngSignature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

    @Test func anImageIsDownloadedOnceAndThenServedFromTheDirectory() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ArtworkCache(directory: directory.appendingPathComponent("art"), session: Session())
            let url = server.url("/artwork/395542593/60x60bb.png")
            #expect(cache.cachedFile(for: url) == nil)
            let file = try await cache.load(url)
            #expect(file == cache.fileURL(for: url))
            #expect(file.lastPathComponent.hasSuffix("-60x60bb.png"))
            // Another size, another query: other files.
            #expect(cache.fileURL(for: server.url("/artwork/395542593/100x100bb.png")) != file)
            #expect(cache.fileURL(for: server.url("/artwork/395542593/60x60bb.png?v=2")) != file)
            #expect(try Data(contentsOf: file).prefix(8) == Self.pngSignature)
            let requests = server.statistics.totalRequests

            // Again: no request, the same file, and the completion API hands back no request to cancel.
            #expect(try await cache.load(url) == file)
            let loaded = try await completion { done in
                let request = cache.load(url, queue: .global()) { done($0) }
                #expect(request == nil)
            }
            #expect(try loaded.get() == file)
            #expect(server.statistics.totalRequests == requests)
        }
    }

    @Test func aMissingImageFailsAndLeavesNoFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ArtworkCache(directory: directory, session: Session())
            let url = server.url("/artwork/1/60x60bb.png")
            let error = await #expect(throws: AFError.self) { try await cache.load(url) }
            #expect(error?.responseCode == 404)
            #expect(cache.cachedFile(for: url) == nil)
        }
    }

    @Test func aDownloadNoLongerNeededIsCancelledAndLeavesNoFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ArtworkCache(directory: directory, session: Session())
            // A slow image: the artwork of a row scrolled away before it arrives.
            let url = server.url("/hold/never")
            let outcome = try await completion { done in
                let request = cache.load(url, queue: .global()) { done($0) }
                request?.cancel()
            }
            guard case .failure(let error) = outcome else {
                Issue.record("a cancelled download succeeded")
                return
            }
            #expect(error.isExplicitlyCancelledError)
            #expect(cache.cachedFile(for: url) == nil)
        }
    }
}
