public import AlamofireNIO
import Foundation

/// Artwork downloaded once into a directory and reused from there, as the chapter's
/// `UIImageView.loadImage(url:)` with a cache on disk: each image is fetched with `download(...)`,
/// and the request is handed back so that a row scrolled out of sight can cancel it (the chapter's
/// `downloadTask?.cancel()` in `prepareForReuse`).
public struct ArtworkCache: Sendable {
    /// Where the images are kept.
    public let directory: URL
    /// The session images are downloaded through.
    public let session: Session

    /// Creates a cache in `directory` (created on the first download).
    public init(directory: URL, session: Session = .default) {
        self.directory = directory
        self.session = session
    }

    /// Where the image at `url` is kept: a hash of the whole URL (so URLs differing only in their
    /// query or in where their slashes fall get files of their own), then its last path component.
    public func fileURL(for url: URL) -> URL {
        // FNV-1a, 64 bits: stable across runs, unlike `hashValue`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.absoluteString.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let last = url.lastPathComponent.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" }
        return directory.appendingPathComponent(String(hash, radix: 16) + "-" + String(last))
    }

    /// The kept file for `url`, if it has been downloaded.
    public func cachedFile(for url: URL) -> URL? {
        let file = fileURL(for: url)
        return FileManager.default.fileExists(atPath: file.path) ? file : nil
    }

    /// Loads the image at `url`: from the directory when it is there (calling `completion` at once
    /// and returning nil), else by a download, which it returns so the caller can cancel it. A
    /// failed or cancelled download leaves no file behind.
    @discardableResult
    public func load(
        _ url: URL, queue: DispatchQueue = .main, completion: @escaping @Sendable (Result<URL, AFError>) -> Void
    ) -> DownloadRequest? {
        if let file = cachedFile(for: url) {
            queue.async { completion(.success(file)) }
            return nil
        }
        return download(url).response(queue: queue) { response in
            switch response.result {
            case .success(let downloaded?): completion(.success(downloaded))
            case .success(nil): completion(.failure(.responseSerializationFailed(reason: .inputFileNil)))
            case .failure(let error):
                discard(url)
                completion(.failure(error))
            }
        }
    }

    /// Loads the image at `url` (see ``load(_:queue:completion:)``); cancelling the task cancels
    /// the download.
    /// - Returns: the image's file.
    /// - Throws: the download's `AFError`.
    public func load(_ url: URL) async throws(AFError) -> URL {
        if let file = cachedFile(for: url) { return file }
        let response = await download(url).serializingDownloadedFileURL(automaticallyCancelling: true).response
        switch response.result {
        case .success(let downloaded): return downloaded
        case .failure(let error):
            discard(url)
            throw error
        }
    }

    /// The validated download of `url` into its file.
    private func download(_ url: URL) -> DownloadRequest {
        let file = fileURL(for: url)
        return session.download(url, to: { _, _ in (file, [.removePreviousFile, .createIntermediateDirectories]) }).validate()
    }

    /// Removes what a failed download left: Alamofire moves the body into place before validating
    /// it, and an error page is not artwork.
    private func discard(_ url: URL) {
        try? FileManager.default.removeItem(at: fileURL(for: url))
    }
}
