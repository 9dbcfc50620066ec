import AlamofireNIO
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension Exchange {
    /// `--download`: the body goes to a file (`--output`, else the name the response suggests, made
    /// unique), the response's headers and a progress bar to standard error (the bar only on a
    /// terminal). With `--continue`, a partial file is continued with a `Range` request: a `206`
    /// that starts where the file ends is appended, anything else replaces it. An error response is
    /// not saved and ends with 3, 4 or 5, as with `--check-status`.
    func runDownload() async -> Int32 {
        var request = urlRequest
        var offset: Int64 = 0
        if options.resume, let output = options.output, let size = Self.fileSize(output), size > 0 {
            offset = size
            request.headers.add(name: "Range", value: "bytes=\(size)-")
        }
        let directory =
            options.output.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let staging = directory.appendingPathComponent(".af-\(getpid())-\(UUID().uuidString).part")
        defer { try? FileManager.default.removeItem(at: staging) }

        let download = session.download(request, to: { _, _ in (staging, [.removePreviousFile]) })
        authenticate(download)
        let showsProgress = Terminal.isTerminal(STDERR_FILENO)
        let reporter = ProgressReporter(bar: ProgressBar(width: Self.terminalWidth()), write: Terminal.errorText)
        // The head goes out once, before the first progress line when there is one.
        let headShown = Mutex(false)
        let showHead: @Sendable (HTTPURLResponse?) -> Void = { [printer, parts = options.parts] response in
            guard parts.contains(.responseHeaders), let response else { return }
            let alreadyShown = headShown.withLock { shown in
                defer { shown = true }
                return shown
            }
            guard !alreadyShown else { return }
            Terminal.errorText(printer.responseHead(response, protocolName: nil) + "\n\n")
        }
        if showsProgress {
            reporter.start(after: offset)
            download.downloadProgress(queue: .global()) { progress in
                showHead(download.response)
                reporter.update(progress)
            }
        }
        let response = await withCheckedContinuation { continuation in
            download.response(queue: .global()) { continuation.resume(returning: $0) }
        }
        if let error = response.error {
            if showsProgress { Terminal.errorText("\n") }
            return fail(error)
        }
        guard let http = response.response else { return fail(.sessionTaskFailed(error: URLError(.badServerResponse))) }
        showHead(http)
        if offset > 0, http.statusCode == 416 {
            if showsProgress { Terminal.error("The file is already complete.") }
            return 0
        }
        guard (200..<300).contains(http.statusCode) else {
            if showsProgress { Terminal.errorText("\n") }
            Terminal.error("af: error: HTTP \(http.statusCode) \(reasonPhrase(http.statusCode)): nothing saved.")
            return status(of: http, checking: true)
        }
        let destination = options.output.map { URL(fileURLWithPath: $0) } ?? Self.uniqueFile(named: Self.fileName(for: http), in: directory)
        do {
            if http.statusCode == 206, offset > 0, Self.rangeStart(of: http) == offset {
                try Self.append(staging, to: destination)
            } else {
                if FileManager.default.fileExists(atPath: destination.path) { try FileManager.default.removeItem(at: destination) }
                try FileManager.default.moveItem(at: staging, to: destination)
            }
        } catch {
            Terminal.error("af: error: cannot save \(destination.path): \(error.localizedDescription)")
            return 1
        }
        if showsProgress {
            reporter.finish(bytes: Self.fileSize(destination.path) ?? 0)
            Terminal.error("Saved to \(destination.path)")
        }
        return status(of: http)
    }

    /// The first byte a `Content-Range: bytes FIRST-LAST/TOTAL` covers.
    static func rangeStart(of response: HTTPURLResponse) -> Int64? {
        guard let range = response.value(forHTTPHeaderField: "Content-Range"), range.lowercased().hasPrefix("bytes ") else { return nil }
        return range.dropFirst(6).split(separator: "-").first.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    static func fileSize(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }

    /// The name a response suggests: `Content-Disposition`'s `filename`, else the URL's last path
    /// component, else `index`.
    static func fileName(for response: HTTPURLResponse) -> String {
        if let disposition = response.value(forHTTPHeaderField: "Content-Disposition"),
            let range = disposition.range(of: "filename=", options: .caseInsensitive)
        {
            let value = disposition[range.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            let name = (value as NSString).lastPathComponent
            if !name.isEmpty, name != ".", name != ".." { return name }
        }
        let last = response.url?.lastPathComponent ?? ""
        return last.isEmpty || last == "/" ? "index" : last
    }

    /// `name` in `directory`, or `name-1`, `name-2`… when taken (the extension kept).
    static func uniqueFile(named name: String, in directory: URL) -> URL {
        let base = name.replacingOccurrences(of: "/", with: "_")
        var candidate = directory.appendingPathComponent(base)
        var suffix = 1
        while FileManager.default.fileExists(atPath: candidate.path) {
            let stem = (base as NSString).deletingPathExtension
            let pathExtension = (base as NSString).pathExtension
            candidate = directory.appendingPathComponent("\(stem)-\(suffix)" + (pathExtension.isEmpty ? "" : ".\(pathExtension)"))
            suffix += 1
        }
        return candidate
    }

    /// Appends `source`'s bytes to `destination`, a mebibyte at a time.
    static func append(_ source: URL, to destination: URL) throws {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        try output.seekToEnd()
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
    }

    /// The terminal's width from standard error, 80 when unknown.
    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
