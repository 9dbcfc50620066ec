import Foundation

/// Who allocates, read from a callgrind output file's call edges.
///
/// `direct` keys each allocation by the function that called the allocator: Swift code's calls to
/// `swift_allocObject` (an object, box or closure context) and `swift_slowAlloc` (a buffer), and
/// other code's calls to the C allocator; the runtime's own hops between them (`swift_allocObject`
/// → `swift_slowAlloc` → `malloc`) are not counted again. Most direct callers are the standard
/// library's or NIO's helpers (an array growing, a dictionary's storage, a future), so
/// `nearestCaller(in:)` carries each one up the call edges to the nearest function of the given
/// modules, sharing a helper's allocations among its callers in proportion to their calls.
struct AllocationSites {
    private(set) var direct: [String: Int] = [:]
    /// Calls along each edge, by callee, then by caller.
    private var callers: [String: [String: Int]] = [:]

    init(_ output: URL) throws {
        let swiftAllocators: Set<Substring> = ["swift_allocObject", "swift_slowAlloc"]
        let text = try String(contentsOf: output, encoding: .utf8)
        var names: [Substring: Substring] = [:]
        var caller: Substring = ""
        var callee: Substring = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("fn=") {
                caller = CallgrindTotals.name(line.dropFirst(3), names: &names)
            } else if line.hasPrefix("cfn=") {
                callee = CallgrindTotals.name(line.dropFirst(4), names: &names)
            } else if line.hasPrefix("calls=") {
                guard let count = Int(line.dropFirst(6).prefix { $0 != " " }) else { continue }
                let isAllocator = swiftAllocators.contains(callee) || CallgrindTotals.allocators.contains(String(callee))
                if isAllocator, !swiftAllocators.contains(caller) {
                    direct[String(caller), default: 0] += count
                } else if !isAllocator {
                    callers[String(callee), default: [:]][String(caller), default: 0] += count
                }
                callee = ""
            }
        }
    }

    /// Each allocation credited to the nearest function of one of `modules` (mangled module names,
    /// such as `12AlamofireNIO`), through at most eight levels of callers; what reaches no such
    /// function stays where it stopped. A function is a module's when its mangled name starts with
    /// it: a library's generic helper specialized for one of the module's types names the module
    /// later, and is passed through.
    func nearestCaller(in modules: [String]) -> [String: Double] {
        func isOwn(_ name: String) -> Bool { modules.contains { name.hasPrefix("$s" + $0) } }
        var credited: [String: Double] = [:]
        var pending: [String: Double] = [:]
        for (name, count) in direct {
            if isOwn(name) { credited[name, default: 0] += Double(count) } else { pending[name, default: 0] += Double(count) }
        }
        for _ in 0..<8 where !pending.isEmpty {
            var next: [String: Double] = [:]
            for (name, count) in pending {
                let incoming = callers[name] ?? [:]
                let total = incoming.values.reduce(0, +)
                guard total > 0 else {
                    credited[name, default: 0] += count
                    continue
                }
                for (caller, calls) in incoming {
                    let share = count * Double(calls) / Double(total)
                    if isOwn(caller) { credited[caller, default: 0] += share } else { next[caller, default: 0] += share }
                }
            }
            pending = next
        }
        for (name, count) in pending { credited[name, default: 0] += count }
        return credited
    }
}
