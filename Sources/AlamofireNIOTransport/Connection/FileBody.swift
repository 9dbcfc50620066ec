import Foundation
import NIOCore
import NIOFileSystem
import NIOPosix

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

    /// The slices a file goes to the socket in by `sendfile`, each written whole before the next.
    /// Upload progress and the idle timer's clock move once a slice is written, so a slice is small
    /// enough to go within any sensible idle interval on a slow link.
    static let regionSize = 512 * 1024

    /// Sends the file by `sendfile` where the writer can, slice by slice, keeping it open until the
    /// last slice is written; otherwise reads it into buffers (``stream(_:into:)``).
    ///
    /// No more than the announced length goes (more would corrupt the connection), and the file's
    /// size is checked before each slice: `sendfile` past a file's end writes nothing, and NIO would
    /// try it again at once until the idle timeout (which still bounds a file cut short during a slice).
    static func send(_ url: URL, announcedLength: Int64?, through writer: TransportBodyWriter) async throws {
        guard let writeRegion = writer.writeRegion else { return try await stream(url, announcedLength: announcedLength, into: writer) }
        let fileIO = NonBlockingFileIO(threadPool: .singleton)
        // Set once the file is open: an error after that is the connection's, not the file's.
        var isOpen = false
        do {
            try await fileIO.withFileRegion(_deprecatedPath: url.path) { whole in
                isOpen = true
                let endIndex = announcedLength.map { min(whole.endIndex, whole.readerIndex + Int($0)) } ?? whole.endIndex
                var start = whole.readerIndex
                while start < endIndex {
                    let end = min(start + regionSize, endIndex)
                    let size = try currentSize(of: whole.fileHandle)
                    guard size >= end else {
                        throw TransportError(
                            .cannotDecodeRawData, "the body file \(url.path) shrank to \(size) bytes while it was sent")
                    }
                    try await writeRegion(FileRegion(fileHandle: whole.fileHandle, readerIndex: start, endIndex: end))
                    start = end
                }
            }
        } catch let error as IOError where !isOpen {
            throw TransportError(.cannotOpenFile, "cannot read the body file \(url.path)", underlyingError: error)
        }
    }

    private static func currentSize(of handle: NIOFileHandle) throws -> Int {
        try handle.withUnsafeFileDescriptor { descriptor in
            // The end's offset, the position put back (file regions are sent at offsets of their own).
            // Not `fstat`: with the Brotli and Zstd traits' C modules in this module, Swift 6.3 finds
            // `struct stat` in NIO's C module, which cannot be imported here.
            let position = lseek(descriptor, 0, SEEK_CUR)
            let end = lseek(descriptor, 0, SEEK_END)
            guard position >= 0, end >= 0, lseek(descriptor, position, SEEK_SET) >= 0 else {
                throw TransportError(
                    .cannotOpenFile, "cannot read the body file's size", underlyingError: IOError(errnoCode: errno, reason: "lseek"))
            }
            return Int(end)
        }
    }

    /// Reads the file into buffers and writes them, stopping at the announced length (a file that
    /// grew meanwhile sends what was announced, as `sendfile` does).
    static func stream(_ url: URL, announcedLength: Int64?, into writer: TransportBodyWriter) async throws {
        do {
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
                var remaining = announcedLength ?? .max
                for try await chunk in handle.readChunks(chunkLength: .bytes(Int64(chunkSize))) {
                    let length = Int(min(Int64(chunk.readableBytes), remaining))
                    remaining -= Int64(length)
                    try await writer.write(chunk.getSlice(at: chunk.readerIndex, length: length) ?? chunk)
                    if remaining == 0 { break }
                }
            }
        } catch let error as FileSystemError {
            throw TransportError(.cannotOpenFile, "cannot read the body file \(url.path)", underlyingError: error)
        }
    }
}
