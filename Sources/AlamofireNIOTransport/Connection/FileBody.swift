import Foundation
import NIOCore
import NIOFileSystem

/// Streams a file as a request body, a chunk at a time, off the event loops.
enum FileBody {
    static let chunkSize = 512 * 1024

    /// The file's size, or the error URLSession gives for a file it cannot read.
    static func length(of url: URL) throws -> Int64 {
        guard url.isFileURL else { throw TransportError(.unsupportedURL, "\(url) is not a file URL") }
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
                throw TransportError(.cannotOpenFile, "\(url.path) is not a regular file")
            }
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(.fileDoesNotExist, "cannot read the body file \(url.path)", underlyingError: error)
        }
    }

    static func stream(_ url: URL, into writer: TransportBodyWriter) async throws {
        do {
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
                for try await chunk in handle.readChunks(chunkLength: .bytes(Int64(chunkSize))) {
                    try await writer.write(chunk)
                }
            }
        } catch let error as FileSystemError {
            throw TransportError(.cannotOpenFile, "cannot read the body file \(url.path)", underlyingError: error)
        }
    }
}
