import Foundation
import Testing

/// Every committed fuzz corpus (`Fuzzing/Corpus/<target>`), replayed through its target by the plain
/// build of `alamofire-fuzz`: an input that once crashed a parser keeps being checked by every test
/// run, not only by `Scripts/fuzz.sh`.
@Suite struct FuzzCorpusTests {
    static let fuzzURL = probeURL.deletingLastPathComponent().appendingPathComponent("alamofire-fuzz")
    static let corpora = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzzing/Corpus")

    static let targets = [
        "brotli", "cache-control", "certificates", "connect-response", "content-range", "multipart", "netlink", "resume-data",
        "server-sent-events", "set-cookie", "socks5-reply", "websocket-deflate", "www-authenticate", "zstd",
    ]

    @Test func everyTargetHasACorpus() throws {
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.corpora.path).sorted()
        #expect(present == Self.targets)
    }

    @Test(arguments: targets)
    func theCorpusReplaysWithoutACrash(target: String) async throws {
        let corpus = Self.corpora.appendingPathComponent(target)
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
        #expect(!files.isEmpty)
        let (status, output) = try await runProgram(Self.fuzzURL.path, [target, corpus.path])
        #expect(status == 0, "\(output)")
    }

    @Test func anUnknownTargetIsRefused() async throws {
        let (status, output) = try await runProgram(Self.fuzzURL.path, ["no-such-target"])
        #expect(status == 2)
        #expect(output.contains("targets: brotli, cache-control, certificates, connect-response"))
    }
}
