import AlamofireNIO
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFileSystem
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// W7's multipart upload and W8's streamed body, for each client. (NIOFileSystem has a `FileHandle`
// of its own: Foundation's is spelled out.)

extension AlamofireNIOClient {
    func multipartUpload(_ file: URL, to url: URL) async throws {
        // The form is over `MultipartFormData.encodingMemoryThreshold` (10 MB): as in Alamofire, it is
        // written to a temporary file first, which is streamed from disk and then removed.
        _ = try await session.upload(
            multipartFormData: { $0.append(file, withName: "file", fileName: "upload.bin", mimeType: "application/octet-stream") },
            to: url, method: .put
        ).validate().serializingData(emptyResponseCodes: [200, 201, 204]).value
    }

    func stream(_ url: URL) async throws -> Int {
        var count = 0
        for await chunk in session.streamRequest(url).validate().streamTask().streamingData() {
            if case .stream(.success(let data)) = chunk.event {
                count += data.count
            } else if case .complete(let completion) = chunk.event, let error = completion.error {
                throw error
            }
        }
        return count
    }
}

extension AsyncHTTPClientClient {
    func multipartUpload(_ file: URL, to url: URL) async throws {
        let form = SingleFileForm()
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.path)) { handle in
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .PUT
            request.headers.add(name: "Content-Type", value: form.contentType)
            let body = MultipartBodyChunks(
                preamble: ByteBuffer(string: form.preamble), file: handle.readChunks(chunkLength: .kibibytes(64)),
                epilogue: ByteBuffer(string: form.epilogue))
            request.body = .stream(body, length: .known(Int64(form.length(fileSize: size))))
            let response = try await client.execute(request, timeout: .seconds(600))
            guard (200..<300).contains(response.status.code) else { throw UnexpectedResponse(description: "status \(response.status)") }
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    }

    func stream(_ url: URL) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
        guard response.status == .ok else { throw UnexpectedResponse(description: "status \(response.status)") }
        var count = 0
        for try await buffer in response.body {
            // Each chunk handed out as `Data`, as AlamofireNIO's stream hands them out.
            count += Data(buffer.readableBytesView).count
        }
        return count
    }
}

extension URLSessionClient {
    func multipartUpload(_ file: URL, to url: URL) async throws {
        // What Alamofire on URLSession does above its threshold: the form in a temporary file, uploaded from there.
        let form = SingleFileForm()
        let body = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: body) }
        try form.write(file, to: body)
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            session.uploadTask(with: request, fromFile: body) { _, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
                    return continuation.resume(throwing: UnexpectedResponse(description: "not 2xx"))
                }
                continuation.resume()
            }.resume()
        }
    }

    func stream(_ url: URL) async throws -> Int {
        let delegate = ByteCountingDelegate()
        // A session of its own, made like the client's, whose delegate gets the body's chunks.
        let streaming = URLSession(configuration: session.configuration, delegate: delegate, delegateQueue: nil)
        defer { streaming.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            delegate.notify(continuation)
            streaming.dataTask(with: url).resume()
        }
    }
}

/// A `multipart/form-data` body whose one part is a file, framed byte for byte as Alamofire encodes
/// `append(_:withName:fileName:mimeType:)` with the name `file` and the file name `upload.bin`: what
/// AsyncHTTPClient and URLSession send for W7.
struct SingleFileForm: Sendable {
    let boundary = "alamofire.boundary.\(String(UInt64.random(in: .min ... .max), radix: 16))"

    /// The request's `Content-Type` header.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The opening boundary and the part's headers, before the file's contents.
    var preamble: String {
        "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
    }

    /// The closing boundary, after the file's contents.
    var epilogue: String { "\r\n--\(boundary)--\r\n" }

    /// The body's length in bytes for a file of `fileSize` bytes.
    func length(fileSize: Int) -> Int {
        preamble.utf8.count + fileSize + epilogue.utf8.count
    }

    /// Writes the whole body to `destination`, copying the file 64 KiB at a time (Alamofire's
    /// stream buffer size), so memory stays flat whatever its size.
    func write(_ file: URL, to destination: URL) throws {
        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
        let output = try Foundation.FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        let input = try Foundation.FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        try output.write(contentsOf: Data(preamble.utf8))
        while let chunk = try input.read(upToCount: 64 * 1024), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
        try output.write(contentsOf: Data(epilogue.utf8))
    }
}

/// AsyncHTTPClient's W7 body: the form's preamble, the file's chunks as NIOFileSystem reads them,
/// then the closing boundary. It holds no more than the chunk in hand.
struct MultipartBodyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let preamble: ByteBuffer
    let file: FileChunks
    let epilogue: ByteBuffer

    func makeAsyncIterator() -> Iterator {
        Iterator(preamble: preamble, file: file.makeAsyncIterator(), epilogue: epilogue)
    }

    /// The iterator of a ``MultipartBodyChunks``.
    struct Iterator: AsyncIteratorProtocol {
        var preamble: ByteBuffer?
        var file: FileChunks.AsyncIterator
        var epilogue: ByteBuffer?
        /// Whether the file's chunks have run out (its iterator is not asked again).
        var fileEnded = false

        init(preamble: ByteBuffer, file: FileChunks.AsyncIterator, epilogue: ByteBuffer) {
            self.preamble = preamble
            self.file = file
            self.epilogue = epilogue
        }

        mutating func next() async throws -> ByteBuffer? {
            if let preamble {
                self.preamble = nil
                return preamble
            }
            if !fileEnded, let chunk = try await file.next() { return chunk }
            fileEnded = true
            defer { epilogue = nil }
            return epilogue
        }
    }
}

/// URLSession's W8 delegate: counts a data task's body bytes as its `Data` chunks arrive, and hands
/// the count (or the failure) to the task awaiting it once the data task completes.
final class ByteCountingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var count = 0
        var continuation: CheckedContinuation<Int, any Error>?
    }

    private let state = Mutex(State())

    /// Resumes `continuation` with the byte count when the task completes.
    func notify(_ continuation: CheckedContinuation<Int, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { $0.count += data.count }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (count, continuation) = state.withLock { state -> (Int, CheckedContinuation<Int, any Error>?) in
            defer { state.continuation = nil }
            return (state.count, state.continuation)
        }
        if let error {
            continuation?.resume(throwing: error)
        } else if (task.response as? HTTPURLResponse)?.statusCode != 200 {
            continuation?.resume(throwing: UnexpectedResponse(description: "not 200"))
        } else {
            continuation?.resume(returning: count)
        }
    }
}
