import Foundation
import Testing

@testable import AlamofireNIO

/// MultipartFormData: Alamofire 5.12's byte layout, file checks, recorded failures and file output, as plain values.
@Suite struct MultipartFormDataTests {
    // MARK: - Helpers

    /// The multipart failure `body` throws, or nil when it throws nothing or something else.
    func multipartFailure(_ body: () throws -> Void) -> AFError.MultipartEncodingFailureReason? {
        do {
            try body()
            return nil
        } catch AFError.multipartEncodingFailed(let reason) {
            return reason
        } catch {
            return nil
        }
    }

    /// A new file in the temporary directory with a unique name and the given extension.
    func makeTemporaryFile(extension pathExtension: String, contents: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).\(pathExtension)")
        try #require(FileManager.default.createFile(atPath: url.path, contents: contents))
        return url
    }

    /// A path in the temporary directory where nothing exists yet.
    func unusedTemporaryURL(extension pathExtension: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).\(pathExtension)")
    }

    func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// Bytes that are not valid UTF-8 and span several 1024-byte reads.
    static let binaryContent = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    // MARK: - Layout

    @Test func dataPartIsFramedByInitialAndFinalBoundaries() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("Lorem ipsum".utf8), withName: "field")
        let expected = "--B\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nLorem ipsum\r\n--B--\r\n"
        #expect(try form.encode() == Data(expected.utf8))
    }

    @Test func dataPartWithFileNameAndMIMETypeHasBothHeaders() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("abc".utf8), withName: "upload", fileName: "a.txt", mimeType: "text/plain")
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nabc\r\n--B--\r\n"
        #expect(text(try form.encode()) == expected)
    }

    @Test func dataPartWithOnlyAMIMETypeHasNoFileName() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("日本語".utf8), withName: "japanese", mimeType: "text/plain")
        let expected = "--B\r\nContent-Disposition: form-data; name=\"japanese\"\r\nContent-Type: text/plain\r\n\r\n日本語\r\n--B--\r\n"
        #expect(text(try form.encode()) == expected)
    }

    @Test func twoPartsAreSeparatedByAnEncapsulatedBoundary() throws {
        let form = MultipartFormData(boundary: "alamofire.boundary.0123456789abcdef")
        form.append(Data("français".utf8), withName: "french")
        form.append(Data("😃👍🏻".utf8), withName: "emoji", fileName: "e.txt", mimeType: "text/plain")
        let expected =
            "--alamofire.boundary.0123456789abcdef\r\n"
            + "Content-Disposition: form-data; name=\"french\"\r\n\r\n"
            + "français"
            + "\r\n--alamofire.boundary.0123456789abcdef\r\n"
            + "Content-Disposition: form-data; name=\"emoji\"; filename=\"e.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n"
            + "😃👍🏻"
            + "\r\n--alamofire.boundary.0123456789abcdef--\r\n"
        #expect(try form.encode() == Data(expected.utf8))
    }

    @Test func emptyFormEncodesToNothing() throws {
        let form = MultipartFormData(boundary: "B")
        #expect(try form.encode() == Data())
        #expect(form.contentLength == 0)
    }

    @Test func contentLengthCountsOnlyThePartsContents() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("abc".utf8), withName: "one")
        form.append(Data("hello".utf8), withName: "two")
        // As in Alamofire: the contents' lengths, without headers and boundaries.
        #expect(form.contentLength == 8)
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"one\"\r\n\r\nabc"
            + "\r\n--B\r\nContent-Disposition: form-data; name=\"two\"\r\n\r\nhello\r\n--B--\r\n"
        #expect(try form.encode().count == expected.utf8.count)
    }

    @Test func encodingMemoryThresholdIsAlamofires() {
        #expect(MultipartFormData.encodingMemoryThreshold == 10_000_000)
    }

    // MARK: - Streams

    @Test func streamPartWithHeadersKeepsTheirOrder() throws {
        let form = MultipartFormData(boundary: "B")
        let headers: HTTPHeaders = [
            .contentDisposition("form-data; name=\"log\""), HTTPHeader(name: "X-Part", value: "1"), .contentType("text/plain"),
        ]
        form.append(InputStream(data: Data("hello".utf8)), withLength: 5, headers: headers)
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"log\"\r\nX-Part: 1\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--\r\n"
        #expect(text(try form.encode()) == expected)
        #expect(form.contentLength == 5)
    }

    @Test func streamPartWithNameFileNameAndMIMEType() throws {
        let form = MultipartFormData(boundary: "B")
        let stream = InputStream(data: Self.binaryContent)
        form.append(stream, withLength: 5000, name: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
        var expected = Data(
            ("--B\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        expected.append(Self.binaryContent)
        expected.append(Data("\r\n--B--\r\n".utf8))
        #expect(try form.encode() == expected)
    }

    @Test func streamShorterThanAnnouncedFailsToEncode() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(InputStream(data: Data("hello".utf8)), withLength: 10, headers: [.contentDisposition("form-data; name=\"x\"")])
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .inputStreamReadFailed(let error) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        let mismatch = try #require(error as? AFError.UnexpectedInputStreamLength)
        #expect(mismatch.bytesExpected == 10)
        #expect(mismatch.bytesRead == 5)
    }

    /// A stream part is read once: encoding the form again finds it used up, and fails as Alamofire's
    /// encoder does, with the length it read (none), not a stream error.
    @Test func encodingAStreamPartTwiceFailsWithTheLengthRead() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(InputStream(data: Data("hello".utf8)), withLength: 5, headers: [.contentDisposition("form-data; name=\"x\"")])
        #expect(try form.encode().count > 5)
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .inputStreamReadFailed(let error) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        let mismatch = try #require(error as? AFError.UnexpectedInputStreamLength)
        #expect(mismatch.bytesExpected == 5)
        #expect(mismatch.bytesRead == 0)
    }

    // MARK: - Files

    @Test func filePartTakesItsFileNameAndMIMETypeFromTheURL() throws {
        let file = try makeTemporaryFile(extension: "json", contents: Data(#"{"a":1}"#.utf8))
        defer { try? FileManager.default.removeItem(at: file) }

        let form = MultipartFormData(boundary: "B")
        form.append(file, withName: "document")
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"document\"; filename=\"\(file.lastPathComponent)\"\r\n"
            + "Content-Type: application/json\r\n\r\n{\"a\":1}\r\n--B--\r\n"
        #expect(text(try form.encode()) == expected)
        #expect(form.contentLength == 7)
    }

    @Test func largeFilePartIsReadInFullWithExplicitNameAndType() throws {
        let file = try makeTemporaryFile(extension: "dat", contents: Self.binaryContent)
        defer { try? FileManager.default.removeItem(at: file) }

        let form = MultipartFormData(boundary: "B")
        form.append(file, withName: "photo", fileName: "photo.png", mimeType: "image/png")
        var expected = Data(
            "--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        expected.append(Self.binaryContent)
        expected.append(Data("\r\n--B--\r\n".utf8))
        #expect(try form.encode() == expected)
        #expect(form.contentLength == 5000)
    }

    @Test(arguments: [
        ("json", "application/json"), ("PNG", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("txt", "text/plain"),
        ("pdf", "application/pdf"), ("zip", "application/zip"), ("notaknownextension", "application/octet-stream"),
    ])
    func mimeTypeComesFromThePathExtension(pathExtension: String, mimeType: String) {
        #expect(MultipartFormData.mimeType(forPathExtension: pathExtension) == mimeType)
    }

    // MARK: - Recorded failures

    @Test func nonFileURLIsRejected() throws {
        let remote = try #require(URL(string: "https://example.com/photo.png"))
        let form = MultipartFormData()
        form.append(remote, withName: "photo")
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .bodyPartURLInvalid(let url) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == remote)
    }

    @Test(arguments: ["file:///", "file:///tmp/README", "https://example.com"])
    func urlWithoutFileNameOrExtensionIsRejected(string: String) throws {
        let invalid = try #require(URL(string: string))
        let form = MultipartFormData()
        form.append(invalid, withName: "file")
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .bodyPartFilenameInvalid(let url) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == invalid)
    }

    @Test func missingFileIsNotReachable() throws {
        let missing = unusedTemporaryURL(extension: "png")
        let form = MultipartFormData()
        form.append(missing, withName: "photo")
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .bodyPartFileNotReachableWithError(let url, let error) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == missing)
        // Cast through Any: a plain class cast on Linux, and no "always succeeds" warning on Apple platforms.
        let cocoaError = try #require((error as Any) as? NSError)
        #expect(cocoaError.domain == NSCocoaErrorDomain)
        #expect(cocoaError.code == CocoaError.Code.fileReadNoSuchFile.rawValue)
    }

    @Test func directoryIsRejected() throws {
        let directory = FileManager.default.temporaryDirectory
        let form = MultipartFormData()
        form.append(directory, withName: "folder", fileName: "folder.txt", mimeType: "text/plain")
        let reason = try #require(multipartFailure { _ = try form.encode() })
        guard case .bodyPartFileIsDirectory(let url) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == directory)
    }

    @Test func firstRecordedFailureWinsAndIsThrownByBothEncoders() throws {
        let remote = try #require(URL(string: "https://example.com/photo.png"))
        let form = MultipartFormData()
        form.append(Data("ok".utf8), withName: "fine")
        form.append(remote, withName: "photo")
        form.append(FileManager.default.temporaryDirectory, withName: "folder", fileName: "f", mimeType: "text/plain")

        let encoders: [() throws -> Void] = [
            { _ = try form.encode() },
            { try form.writeEncodedData(to: unusedTemporaryURL(extension: "multipart")) },
        ]
        for encode in encoders {
            let reason = try #require(multipartFailure(encode))
            guard case .bodyPartURLInvalid(let url) = reason else {
                Issue.record("unexpected reason \(reason)")
                continue
            }
            #expect(url == remote)
        }
    }

    // MARK: - Writing to a file

    /// The same form, made anew (each stream is read once).
    func makeMixedForm(file: URL) -> MultipartFormData {
        let form = MultipartFormData(boundary: "alamofire.boundary.00000000ffffffff")
        form.append(Data("Lorem ipsum".utf8), withName: "text")
        form.append(file, withName: "blob")
        form.append(InputStream(data: Data("stream".utf8)), withLength: 6, headers: [.contentDisposition("form-data; name=\"s\"")])
        return form
    }

    @Test func writeEncodedDataWritesTheSameBytesAsEncode() throws {
        let file = try makeTemporaryFile(extension: "png", contents: Self.binaryContent)
        let output = unusedTemporaryURL(extension: "multipart")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: output)
        }

        let encoded = try makeMixedForm(file: file).encode()
        try makeMixedForm(file: file).writeEncodedData(to: output)

        let written = try Data(contentsOf: output)
        #expect(written == encoded)
        var expected = Data(
            "--alamofire.boundary.00000000ffffffff\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nLorem ipsum".utf8)
        expected.append(
            Data(
                ("\r\n--alamofire.boundary.00000000ffffffff\r\nContent-Disposition: form-data; name=\"blob\"; "
                    + "filename=\"\(file.lastPathComponent)\"\r\nContent-Type: image/png\r\n\r\n").utf8))
        expected.append(Self.binaryContent)
        expected.append(
            Data(
                ("\r\n--alamofire.boundary.00000000ffffffff\r\nContent-Disposition: form-data; name=\"s\"\r\n\r\nstream"
                    + "\r\n--alamofire.boundary.00000000ffffffff--\r\n").utf8))
        #expect(written == expected)
    }

    @Test func writeEncodedDataCopiesAtMostTheAnnouncedLength() throws {
        let output = unusedTemporaryURL(extension: "multipart")
        defer { try? FileManager.default.removeItem(at: output) }

        let form = MultipartFormData(boundary: "B")
        form.append(InputStream(data: Data("hello world".utf8)), withLength: 5, headers: [.contentDisposition("form-data; name=\"x\"")])
        try form.writeEncodedData(to: output)
        #expect(text(try Data(contentsOf: output)) == "--B\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nhello\r\n--B--\r\n")
    }

    @Test func writeEncodedDataRefusesAnExistingFile() throws {
        let existing = try makeTemporaryFile(extension: "multipart", contents: Data("keep".utf8))
        defer { try? FileManager.default.removeItem(at: existing) }

        let form = MultipartFormData(boundary: "B")
        form.append(Data("abc".utf8), withName: "field")
        let reason = try #require(multipartFailure { try form.writeEncodedData(to: existing) })
        guard case .outputStreamFileAlreadyExists(let url) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == existing)
        #expect(try Data(contentsOf: existing) == Data("keep".utf8))
    }

    @Test func writeEncodedDataRefusesANonFileURL() throws {
        let remote = try #require(URL(string: "https://example.com/\(UUID().uuidString)"))
        let form = MultipartFormData(boundary: "B")
        form.append(Data("abc".utf8), withName: "field")
        let reason = try #require(multipartFailure { try form.writeEncodedData(to: remote) })
        guard case .outputStreamURLInvalid(let url) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(url == remote)
    }

    @Test func writeEncodedDataFailsWhenTheFileCannotBeOpened() throws {
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("missing-\(UUID().uuidString)").appendingPathComponent("form.multipart")
        let form = MultipartFormData(boundary: "B")
        form.append(Data("abc".utf8), withName: "field")
        let reason = try #require(multipartFailure { try form.writeEncodedData(to: output) })
        switch reason {
        case .outputStreamWriteFailed, .outputStreamCreationFailed: break
        default: Issue.record("unexpected reason \(reason)")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    // MARK: - Boundary and Content-Type

    @Test func randomBoundaryIsAlamofiresFormat() {
        let boundary = MultipartFormData().boundary
        let prefix = "alamofire.boundary."
        #expect(boundary.hasPrefix(prefix))
        let digits = boundary.dropFirst(prefix.count)
        #expect(digits.count == 16)
        #expect(digits.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(MultipartFormData().boundary != boundary)
    }

    @Test func boundaryLinesAreAlamofires() {
        typealias Generator = MultipartFormData.BoundaryGenerator
        #expect(Generator.boundaryData(forBoundaryType: .initial, boundary: "B") == Data("--B\r\n".utf8))
        #expect(Generator.boundaryData(forBoundaryType: .encapsulated, boundary: "B") == Data("\r\n--B\r\n".utf8))
        #expect(Generator.boundaryData(forBoundaryType: .final, boundary: "B") == Data("\r\n--B--\r\n".utf8))
    }

    @Test func contentTypeNamesTheBoundaryAndCanBeReplaced() {
        let form = MultipartFormData(boundary: "xyz")
        #expect(form.boundary == "xyz")
        #expect(form.contentType == "multipart/form-data; boundary=xyz")

        let random = MultipartFormData()
        #expect(random.contentType == "multipart/form-data; boundary=\(random.boundary)")

        form.contentType = "multipart/mixed; boundary=xyz"
        #expect(form.contentType == "multipart/mixed; boundary=xyz")
    }
}
