import AFSynchronization
import AlamofireNIO
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes a `--stream` body as it arrives: the response's head first (when asked), then each
/// chunk as it comes, or, for `text/event-stream`, each Server-Sent Event once it is complete.
final class StreamWriter: Sendable {
    private struct State {
        var headPrinted = false
        var events: ServerSentEventParser?
    }

    private let exchange: Exchange
    private let state = Mutex(State())

    init(exchange: Exchange) {
        self.exchange = exchange
    }

    /// Writes a chunk of the body of `response`.
    func write(_ chunk: Data, response: HTTPURLResponse?) {
        let (head, events) = state.withLock { state -> (String?, [ServerSentEvent]?) in
            let head = takeHead(&state, response: response)
            guard state.events != nil else { return (head, nil) }
            // An event too large ends the printing of events; the rest is dropped.
            let events = (try? state.events?.parse(chunk)) ?? []
            return (head, events)
        }
        if let head { Terminal.out(head) }
        guard exchange.options.parts.contains(.responseBody) else { return }
        if let events {
            events.forEach(print)
        } else {
            Terminal.out(chunk)
        }
    }

    /// Prints the head of a response whose body was empty, and the last event of a stream that
    /// ended without a blank line.
    func finish(response: HTTPURLResponse?) {
        let (head, events) = state.withLock { state in (takeHead(&state, response: response), state.events?.finish() ?? []) }
        if let head { Terminal.out(head) }
        if exchange.options.parts.contains(.responseBody) { events.forEach(print) }
    }

    /// The head to print, once, and whether the body is an event stream.
    private func takeHead(_ state: inout State, response: HTTPURLResponse?) -> String? {
        guard !state.headPrinted, let response else { return nil }
        state.headPrinted = true
        let type = response.value(forHTTPHeaderField: "Content-Type")?.lowercased() ?? ""
        if type.hasPrefix("text/event-stream") { state.events = ServerSentEventParser() }
        guard exchange.options.parts.contains(.responseHeaders) else { return nil }
        return exchange.printer.responseHead(response, protocolName: nil) + "\n\n"
    }

    /// An event as its fields, coloured on a terminal: `id`, `event`, each `data` line, a blank line.
    private func print(_ event: ServerSentEvent) {
        let style = exchange.printer.style
        var lines: [String] = []
        if let id = event.id { lines.append(style.paint("id", .key) + ": " + id) }
        lines.append(style.paint("event", .key) + ": " + style.paint(event.event, .success))
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) {
            lines.append(style.paint("data", .key) + ": " + line)
        }
        Terminal.out(lines.joined(separator: "\n") + "\n\n")
    }
}
