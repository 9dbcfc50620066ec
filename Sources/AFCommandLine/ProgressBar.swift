import AFSynchronization
public import Foundation
import Synchronization

/// The download progress line `af --download` keeps redrawing on a terminal's standard error:
/// percentage, bar, bytes, rate and time left (or, without a `Content-Length`, bytes and rate).
public struct ProgressBar: Sendable {
    /// The line's width in characters.
    public var width: Int

    /// Creates a bar `width` characters wide.
    public init(width: Int = 80) {
        self.width = max(width, 40)
    }

    /// The line after `transferred` bytes in `elapsed` seconds, of a file that already had
    /// `alreadyOnDisk` bytes (a continued download) and will have `total` (unknown when nil or not
    /// positive). The rate and time left count only what this transfer moved.
    public func line(transferred: Int64, alreadyOnDisk: Int64 = 0, total: Int64?, elapsed: TimeInterval) -> String {
        let rate = elapsed > 0 ? Double(transferred) / elapsed : 0
        let rateText = Self.bytes(Int64(rate)) + "/s"
        let completed = transferred + alreadyOnDisk
        guard let total, total > 0 else {
            return "  \(Self.bytes(completed))  \(rateText)"
        }
        let fraction = min(max(Double(completed) / Double(total), 0), 1)
        let percent = String(format: "%3d%%", Int(fraction * 100))
        let eta = rate > 0 && completed < total ? "ETA " + Self.duration(Double(total - completed) / rate) : "ETA -:--"
        let tail = " \(Self.bytes(completed)) / \(Self.bytes(total))  \(rateText)  \(eta)"
        let barWidth = max(width - percent.count - tail.count - 4, 10)
        let filled = Int(fraction * Double(barWidth))
        let bar =
            String(repeating: "=", count: filled) + (filled < barWidth ? ">" + String(repeating: " ", count: barWidth - filled - 1) : "")
        return " \(percent) [\(bar)]\(tail)"
    }

    /// The closing line, as HTTPie's: `Done. 2.6 MB in 0:00:01 (2.5 MB/s)`.
    public func summary(bytes: Int64, elapsed: TimeInterval) -> String {
        let rate = elapsed > 0 ? Double(bytes) / elapsed : 0
        return "Done. \(Self.bytes(bytes)) in \(String(format: "%.2fs", elapsed)) (\(Self.bytes(Int64(rate)))/s)"
    }

    /// A byte count in SI units: `512 B`, `1.2 kB`, `3.4 MB`, `1.0 GB`.
    public static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `m:ss`, or `h:mm:ss` from an hour on.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}

/// Redraws a ``ProgressBar`` on standard error at most ten times a second, from Alamofire's
/// `downloadProgress` handler; prints the summary at the end.
final class ProgressReporter: Sendable {
    private struct Drawing {
        var start: Date?
        var lastDraw = Date.distantPast
        var transferred: Int64 = 0
        /// The first count, when the counts include what was on disk before (resume data).
        var baseline: Int64?
    }

    private let bar: ProgressBar
    private let write: @Sendable (String) -> Void
    private let drawing = Mutex(Drawing())

    /// - Parameters:
    ///   - bar:   The line's shape.
    ///   - write: Writes text to the terminal.
    init(bar: ProgressBar = ProgressBar(), write: @escaping @Sendable (String) -> Void) {
        self.bar = bar
        self.write = write
    }

    /// Redraws for `progress`, unless the last drawing was under 0.1 s ago. `alreadyOnDisk` is what
    /// a continued file held before this transfer's counts; nil when the counts include it (a
    /// download resumed from resume data), in which case the first count is taken as that.
    func update(_ progress: Progress, alreadyOnDisk: Int64?) {
        let now = Date()
        let line: String? = drawing.withLock { drawing in
            let start = drawing.start ?? now
            drawing.start = start
            let onDisk: Int64
            let total: Int64?
            if let alreadyOnDisk {
                onDisk = alreadyOnDisk
                total = progress.totalUnitCount > 0 ? progress.totalUnitCount + alreadyOnDisk : nil
            } else {
                onDisk = drawing.baseline ?? progress.completedUnitCount
                drawing.baseline = onDisk
                total = progress.totalUnitCount > 0 ? progress.totalUnitCount : nil
            }
            drawing.transferred = max(progress.completedUnitCount - (alreadyOnDisk == nil ? onDisk : 0), 0)
            let finished = progress.totalUnitCount > 0 && progress.completedUnitCount >= progress.totalUnitCount
            guard finished || now.timeIntervalSince(drawing.lastDraw) >= 0.1 else { return nil }
            drawing.lastDraw = now
            return bar.line(transferred: drawing.transferred, alreadyOnDisk: onDisk, total: total, elapsed: now.timeIntervalSince(start))
        }
        if let line { write("\r" + line + "\u{1B}[K") }
    }

    /// Ends the line with the summary of what this transfer moved.
    func finish() {
        let (bytes, elapsed) = drawing.withLock { ($0.transferred, $0.start.map { Date().timeIntervalSince($0) } ?? 0) }
        write("\r" + bar.summary(bytes: bytes, elapsed: elapsed) + "\u{1B}[K\n")
    }
}
