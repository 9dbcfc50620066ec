public import Foundation

/// Search results as a plain-text table: name, artist, kind, price with currency, and genre.
public struct ResultsTable: Sendable {
    /// The locale prices are written in.
    public var locale: Locale
    /// The most characters a cell shows; longer text ends with "…".
    public var maximumCellWidth: Int

    /// Creates a table writer.
    public init(locale: Locale = .autoupdatingCurrent, maximumCellWidth: Int = 40) {
        self.locale = locale
        self.maximumCellWidth = max(maximumCellWidth, 2)
    }

    /// The price as the chapter's detail screen shows it: "Free", or the amount in its currency.
    public func price(of result: SearchResult) -> String {
        guard result.price > 0 else { return "Free" }
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .currency
        formatter.currencyCode = result.currency ?? "USD"
        return formatter.string(from: NSNumber(value: result.price)) ?? String(format: "%.2f", result.price)
    }

    /// The table's lines: a header, a rule, and a row per result.
    public func lines(for results: [SearchResult]) -> [String] {
        let header = ["Name", "Artist", "Kind", "Price", "Genre"]
        let rows = results.map { [$0.name, $0.artist.isEmpty ? "Unknown" : $0.artist, $0.type, price(of: $0), $0.genre].map(clipped) }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        return [line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)
    }

    private func clipped(_ text: String) -> String {
        text.count <= maximumCellWidth ? text : String(text.prefix(maximumCellWidth - 1)) + "…"
    }
}
