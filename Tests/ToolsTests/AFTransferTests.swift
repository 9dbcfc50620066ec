import ChildProcess
import Foundation
import HTTPBinServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `af --download`, `--continue`, `--stream`, TLS options and proxies, end to end.
@Suite struct AFTransferTests {
    /// What `/range/n` sends: `abc…z` repeated.
    static func rangeBody(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
    }

    @Test func aPipedDownloadSavesTheFileWithoutAProgressBar() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = server.url("/range/300000").absoluteString
            let first = try await run("af", ["--download", url], in: directory)
            #expect(first.status == 0)
            #expect(first.output.isEmpty)
            #expect(first.errors.hasPrefix("HTTP/1.1 200 OK\n"))
            #expect(!first.errors.contains("%") && !first.errors.contains("\r"))
            #expect(try Data(contentsOf: directory.appendingPathComponent("300000")) == Self.rangeBody(300_000))
            // The name is taken: the next download gets a name of its own.
            let second = try await run("af", ["-d", url], in: directory)
            #expect(second.status == 0)
            #expect(try Data(contentsOf: directory.appendingPathComponent("300000-1")) == Self.rangeBody(300_000))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["300000", "300000-1"])
        }
    }

    @Test func aDownloadOnATerminalDrawsTheProgressBar() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let run = try await runInTerminal("af", ["-d", "-o", "out.bin", server.url("/range/2000000").absoluteString], in: directory)
            #expect(run.status == 0)
            #expect(run.output.contains("\r 100% ["))
            #expect(run.output.contains("] 2.0 MB / 2.0 MB "))
            #expect(run.output.contains("\rDone. 2.0 MB in "))
            #expect(run.output.contains("Saved to \(directory.path)/out.bin"))
            let head = try #require(run.output.range(of: "200 OK"))
            let bar = try #require(run.output.range(of: "% ["))
            #expect(head.lowerBound < bar.lowerBound, "the head comes before the bar")
            #expect(try Data(contentsOf: directory.appendingPathComponent("out.bin")) == Self.rangeBody(2_000_000))
        }
    }

    @Test func continueAppendsTheRestOfAPartialFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("part.bin")
            try Self.rangeBody(300_000).prefix(1000).write(to: file)
            let url = server.url("/range/300000").absoluteString
            let resumed = try await run("af", ["-d", "-c", "-o", file.path, url])
            #expect(resumed.status == 0)
            #expect(resumed.errors.hasPrefix("HTTP/1.1 206 Partial Content\n"))
            #expect(resumed.errors.contains("Content-Range: bytes 1000-299999/300000"))
            #expect(try Data(contentsOf: file) == Self.rangeBody(300_000))
            // Complete already: the server's 416 leaves the file alone.
            let again = try await run("af", ["-d", "-c", "-o", file.path, url])
            #expect(again.status == 0)
            #expect(again.errors.hasPrefix("HTTP/1.1 416 Range Not Satisfiable\n"))
            #expect(try Data(contentsOf: file) == Self.rangeBody(300_000))
            // A server that ignores the range sends it all, which replaces the file.
            try Data("stale".utf8).write(to: file)
            let whole = try await run("af", ["-d", "-c", "-o", file.path, server.url("/bytes/100?seed=1").absoluteString])
            #expect(whole.status == 0)
            #expect(try Data(contentsOf: file).count == 100)
        }
    }

    @Test func aRangeThatDoesNotContinueTheFileSavesNothing() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("part.bin")
            try Data("0123456789".utf8).write(to: file)
            // A broken server answers `Range: bytes=10-` with the body's first bytes.
            let run = try await run("af", ["-d", "-c", "-o", file.path, server.url("/range/100?misaligned=1").absoluteString])
            #expect(run.status == 1)
            #expect(run.errors.hasSuffix("does not continue the file at byte 10; nothing saved.\n"))
            #expect(try Data(contentsOf: file) == Data("0123456789".utf8))
        }
    }

    @Test func anInterruptedDownloadContinuesFromItsResumeData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let temporary = directory.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
            let output = directory.appendingPathComponent("big.bin")
            // Held after 1,200,000 bytes until the client leaves, so the interruption always comes mid-body,
            // once a first 1 MiB block is on disk (the resumed download asks for a range, which is not held).
            let url = server.url("/range/2000000?chunk_size=10000&hold=cut&hold_at=1200000").absoluteString
            // The body goes to a temporary file under TMPDIR first: Ctrl-C once part of it is there.
            let command =
                "TMPDIR=\(shellQuoted(temporary.path)) exec \(shellQuoted(buildDirectory.appendingPathComponent("af").path)) -d -o \(shellQuoted(output.path)) \(shellQuoted(url))"
            let process = try ChildProcess("/bin/sh", ["-c", command], mergingErrors: false, capturingErrors: true)
            let started = try await waitUntil(seconds: 30) {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
                return files.contains {
                    (try? FileManager.default.attributesOfItem(atPath: temporary.appendingPathComponent($0).path)[.size] as? Int) ?? 0 > 0
                }
            }
            #expect(started)
            process.signal(SIGINT)
            let (_, errors, termination) = await process.outputErrorsAndTermination()
            #expect(termination == .exited(130))
            #expect(String(decoding: errors, as: UTF8.self).contains("af: interrupted; `af --download --continue --output "))
            let resumeData = directory.appendingPathComponent(".big.bin.af-resume")
            #expect(FileManager.default.fileExists(atPath: resumeData.path))
            #expect(!FileManager.default.fileExists(atPath: output.path))

            // Resume data names its partial file in the temporary directory, as URLSession's does.
            let resumed = try await run("af", ["-d", "-c", "-o", output.path, url], environment: ["TMPDIR": temporary.path])
            #expect(resumed.status == 0)
            #expect(resumed.errors.hasPrefix("HTTP/1.1 206 Partial Content\n"))
            #expect(try Data(contentsOf: output) == Self.rangeBody(2_000_000))
            #expect(!FileManager.default.fileExists(atPath: resumeData.path))
        }
    }

    @Test func anErrorResponseIsNotSaved() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let run = try await run("af", ["-d", "-o", "missing.bin", server.url("/status/404").absoluteString], in: directory)
            #expect(run.status == 4)
            #expect(run.errors.hasSuffix("af: error: HTTP 404 Not Found: nothing saved.\naf: warning: HTTP 404 Not Found\n"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test func serverSentEventsArePrintedAsEvents() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", ["--stream", server.url("/sse").absoluteString, "count==2"])
            #expect(run.status == 0)
            #expect(run.output == "id: 0\nevent: tick\ndata: {\"id\":0}\n\nid: 1\nevent: tick\ndata: {\"id\":1}\n\n")
        }
    }

    @Test func aStreamedBodyIsWrittenAsItArrives() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", ["-S", "--print", "hb", server.url("/drip").absoluteString, "numbytes==5", "duration==0.2"])
            #expect(run.status == 0)
            #expect(run.output.hasPrefix("HTTP/1.1 200 OK\n"))
            #expect(run.output.hasSuffix("\n\n*****"))
        }
    }

    @Test func tlsIsVerifiedUnlessToldOtherwise() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let ca = directory.appendingPathComponent("ca.pem")
            try Data(certificates.certificateAuthority.certificatePEM.utf8).write(to: ca)
            let valid = try #require(server.tlsURL(.valid, "/get")).absoluteString

            let untrusted = try await run("af", [valid])
            #expect(untrusted.status == 1)
            #expect(untrusted.errors.hasPrefix("af: error: "))
            #expect(try await run("af", ["--ca", ca.path, valid]).status == 0)
            #expect(try await run("af", ["--verify", ca.path, valid]).status == 0)
            let selfSigned = try #require(server.tlsURL(.selfSigned, "/get")).absoluteString
            #expect(try await run("af", ["--ca", ca.path, selfSigned]).status == 1)
            #expect(try await run("af", ["--verify", "no", selfSigned]).status == 0)
        }
    }

    @Test func aClientCertificateIsSentWhenTheServerAsks() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let ca = directory.appendingPathComponent("ca.pem")
            try Data(certificates.certificateAuthority.certificatePEM.utf8).write(to: ca)
            let certificate = directory.appendingPathComponent("client.pem")
            try Data(certificates.client.certificatePEM.utf8).write(to: certificate)
            let key = directory.appendingPathComponent("client-key.pem")
            try Data(certificates.client.privateKeyPEM.utf8).write(to: key)
            let url = try #require(server.tlsURL(.mutualTLS, "/get")).absoluteString

            let withCertificate = try await run("af", ["--ca", ca.path, "--cert", certificate.path, "--cert-key", key.path, url])
            #expect(withCertificate.status == 0)
            let without = try await run("af", ["--ca", ca.path, url])
            #expect(without.status == 1)
            let missing = try await run("af", ["--cert", directory.appendingPathComponent("none.pem").path, url])
            #expect(missing.status == 1)
            #expect(missing.errors.hasPrefix("af: error: cannot read the client certificate "))
        }
    }

    @Test func requestsGoThroughTheProxyNamed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let url = server.url("/get").absoluteString
            let proxied = try await run("af", ["--proxy", "http:http://127.0.0.1:\(proxy.port)", url])
            let forwarded = proxy.statistics.forwardedRequests
            try await proxy.shutdown()
            #expect(proxied.status == 0)
            #expect(forwarded == [url])
            let bad = try await run("af", ["--proxy", "gopher", url])
            #expect(bad.status == 64)
        }
    }
}
