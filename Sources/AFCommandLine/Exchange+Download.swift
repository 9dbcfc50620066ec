import AFSynchronization
import AlamofireNIO
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension Exchange {
    /// `--download`: the body goes to a file (`--output`, else the name the response suggests, made
    /// unique), the response's head and a progress bar to standard error (the bar only on a
    /// terminal). An error response is not saved and ends with 3, 4 or 5, as with `--check-status`.
    ///
    /// Interrupted (SIGINT) with `--output`, the download is cancelled producing Alamofire's resume
    /// data, kept beside the file as `.NAME.af-resume`. `--continue` resumes from that resume data
    /// when it is there; otherwise it continues a partial file (another tool's) with a `Range`
    /// request: a `206` starting where the file ends is appended, a `416` leaves a complete file
    /// alone, a whole `200` replaces it, and any other range saves nothing.
    func runDownload() async -> Int32 {
        let resumeDataFile = options.output.map(Self.resumeDataFile(for:))
        let directory =
            options.output.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let staging = directory.appendingPathComponent(".af-\(getpid())-\(UUID().uuidString).part")
        defer { try? FileManager.default.removeItem(at: staging) }
        let toStaging: DownloadRequest.Destination = { _, _ in (staging, [.removePreviousFile]) }

        var rangeOffset: Int64 = 0
        let download: DownloadRequest
        let resumeData = options.resume ? resumeDataFile.flatMap { Self.resumeData(in: $0, for: urlRequest) } : nil
        if let resumeData {
            download = session.download(resumingWith: resumeData, to: toStaging)
        } else {
            var request = urlRequest
            if options.resume, let output = options.output, let size = Self.fileSize(output), size > 0 {
                rangeOffset = size
                request.headers.add(name: "Range", value: "bytes=\(size)-")
            }
            download = session.download(request, to: toStaging)
        }
        authenticate(download)

        // Events in order, on one queue: the head once, then the bar.
        let events = DispatchQueue(label: "af.download")
        let showsProgress = Terminal.isTerminal(STDERR_FILENO)
        let reporter = ProgressReporter(bar: ProgressBar(width: Self.terminalWidth()), write: Terminal.errorText)
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
            download.downloadProgress(queue: events) { [rangeOffset] progress in
                showHead(download.response)
                // Bytes already on disk count only when the server continues them.
                // Resumed from resume data, the counts include what was on disk: the first is the baseline.
                let onDisk: Int64? = resumeData != nil ? nil : download.response?.statusCode == 206 ? rangeOffset : 0
                reporter.update(progress, alreadyOnDisk: onDisk)
            }
        }
        let interruption = Interruption(on: events) { [keepsResumeData = resumeDataFile != nil] in
            download.cancel(producingResumeData: keepsResumeData)
        }
        let response = await withCheckedContinuation { continuation in
            download.response(queue: events) { continuation.resume(returning: $0) }
        }
        interruption.stop()

        if interruption.happened {
            if showsProgress { Terminal.errorText("\n") }
            guard let resumeDataFile, let resumeData = response.resumeData, (try? resumeData.write(to: resumeDataFile)) != nil else {
                Terminal.error("af: interrupted.")
                return 130
            }
            Terminal.error("af: interrupted; `af --download --continue --output \(options.output ?? "")` continues it.")
            return 130
        }
        if let error = response.error {
            if showsProgress { Terminal.errorText("\n") }
            // A transfer that broke off may leave resume data: keep it for --continue.
            if let resumeDataFile {
                if let newData = response.resumeData, (try? newData.write(to: resumeDataFile)) != nil {
                    Terminal.error("af: `af --download --continue --output \(options.output ?? "")` continues it.")
                } else {
                    try? FileManager.default.removeItem(at: resumeDataFile)
                }
            }
            return fail(error)
        }
        if let resumeDataFile { try? FileManager.default.removeItem(at: resumeDataFile) }
        guard let http = response.response else { return fail(.sessionTaskFailed(error: URLError(.badServerResponse))) }
        showHead(http)
        if rangeOffset > 0, http.statusCode == 416 {
            if showsProgress { Terminal.error("The file is already complete.") }
            return 0
        }
        guard (200..<300).contains(http.statusCode) else {
            if showsProgress { Terminal.errorText("\n") }
            Terminal.error("af: error: HTTP \(http.statusCode) \(reasonPhrase(http.statusCode)): nothing saved.")
            return status(of: http, checking: true)
        }
        let destination =
            options.output.map { URL(fileURLWithPath: $0) } ?? Self.uniqueFile(named: Self.fileName(for: http), in: directory)
        do {
            if rangeOffset > 0, http.statusCode == 206 {
                guard Self.rangeStart(of: http) == rangeOffset else {
                    let range = http.value(forHTTPHeaderField: "Content-Range") ?? "none"
                    Terminal.error(
                        "af: error: the server's range (Content-Range: \(range)) does not continue the file at byte \(rangeOffset); nothing saved."
                    )
                    return 1
                }
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
            reporter.finish()
            Terminal.error("Saved to \(destination.path)")
        }
        return status(of: http)
    }

    /// The resume data kept in `file` if it resumes `request`'s URL; resume data for another URL is
    /// removed, so it does not fill the output with the wrong body.
    static func resumeData(in file: URL, for request: URLRequest) -> Data? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        let url = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["url"] as? String
        guard url == request.url?.absoluteString else {
            try? FileManager.default.removeItem(at: file)
            return nil
        }
        return data
    }

    /// Where an interrupted download's resume data is kept: `.NAME.af-resume` beside the output.
    static func resumeDataFile(for output: String) -> URL {
        let file = URL(fileURLWithPath: output)
        return file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).af-resume")
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
