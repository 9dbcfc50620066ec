import AlamofireNIOTransport
import Foundation
import NIOCore
import NIOFileSystem

/// The temporary file a download streams into, as URLSession's download task keeps one.
enum DownloadFile {
    /// Writes reach the disk in blocks of this size: one file-system call per block, not per packet.
    static let writeBlockSize = 1 << 20

    /// A new, unused name in `directory`.
    static func temporaryURL(in directory: URL) -> URL {
        directory.appendingPathComponent("AlamofireNIO_\(UUID.random().uuidString).tmp")
    }

    /// Writes `bytes` (a local resource's) into a new file at `url`.
    static func write(_ bytes: ByteBuffer, to url: URL) async throws {
        do {
            try await FileSystem.shared.withFileHandle(
                forWritingAt: FilePath(url.path), options: .newFile(replaceExisting: true)
            ) { handle in
                _ = try await handle.write(contentsOf: bytes.readableBytesView, toAbsoluteOffset: 0)
            }
        } catch let error as FileSystemError {
            throw TransportError(.cannotCreateFile, "cannot write the downloaded file \(url.path)", underlyingError: error)
        }
    }

    /// Streams `body` into the file at `url`, pulling the next chunk only once the last one is
    /// buffered, so memory stays flat whatever the size. With an `offset` the body continues an
    /// existing file from there (anything after it is cut off); without one it makes a new file.
    /// `written` hears the body's byte count after each chunk. What arrived before a failure or a
    /// cancel is on disk when this throws.
    static func write(
        _ body: TransportResponseBody, to url: URL, at offset: Int64? = nil, written: (@Sendable (Int64) -> Void)? = nil
    ) async throws {
        do {
            // Written in place (not to a hidden file renamed on success), so that what arrived before a failure stays.
            let options: OpenOptions.Write = .modifyFile(createIfNecessary: offset == nil)
            try await FileSystem.shared.withFileHandle(forWritingAt: FilePath(url.path), options: options) { handle in
                try await handle.resize(to: .bytes(offset ?? 0))
                try await handle.withBufferedWriter(startingAtAbsoluteOffset: offset ?? 0, capacity: .bytes(Int64(writeBlockSize))) {
                    writer in
                    var count: Int64 = 0
                    for try await chunk in body {
                        try await writer.write(contentsOf: chunk)
                        count += Int64(chunk.readableBytes)
                        written?(count)
                    }
                }
            }
        } catch let error as FileSystemError {
            throw TransportError(.cannotCreateFile, "cannot write the downloaded file \(url.path)", underlyingError: error)
        }
    }

    /// The size of the regular file at `url` (not a link or a directory), or nil when there is none.
    static func size(of url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }

    /// Whether `name` is one `temporaryURL(in:)` makes: resume data may only name such a file.
    static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix("AlamofireNIO_") && name.hasSuffix(".tmp") && name.count == "AlamofireNIO_.tmp".count + 36
            && name.dropFirst("AlamofireNIO_".count).dropLast(4).allSatisfy { $0.isHexDigit || $0 == "-" }
    }
}
