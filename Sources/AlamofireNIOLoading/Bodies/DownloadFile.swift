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

    /// Streams `body` into a new file at `url`, pulling the next chunk only once the last one is
    /// buffered, so memory stays flat whatever the size.
    static func write(_ body: TransportResponseBody, to url: URL) async throws {
        do {
            try await FileSystem.shared.withFileHandle(
                forWritingAt: FilePath(url.path), options: .newFile(replaceExisting: true)
            ) { handle in
                try await handle.withBufferedWriter(capacity: .bytes(Int64(writeBlockSize))) { writer in
                    for try await chunk in body {
                        try await writer.write(contentsOf: chunk)
                    }
                }
            }
        } catch let error as FileSystemError {
            throw TransportError(.cannotCreateFile, "cannot write the downloaded file \(url.path)", underlyingError: error)
        }
    }
}
