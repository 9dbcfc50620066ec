import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Hosts that are reached directly, not through the proxy: `no_proxy` or a proxy dictionary's
/// `ExceptionsList`.
///
/// An entry is `*` (every host), a host name (matching it and its subdomains; a leading `.` or
/// `*.` is dropped, and so is a `:port`), an IPv4 or IPv6 address (IPv6 with or without brackets),
/// or a CIDR range (`10.0.0.0/8`, `fd00::/8`, and the short form `169.254/16`). Names compare
/// without case; an address matches only address entries.
public struct ProxyExceptions: Sendable, Hashable {
    enum Entry: Sendable, Hashable {
        case everyHost
        case domain(String)
        /// The network's address bytes (4 or 16) and how many leading bits must match.
        case network([UInt8], prefixLength: Int)
    }

    private(set) var entries: [Entry] = []
    /// Whether host names without a dot (`intranet`) are reached directly (`ExcludeSimpleHostnames`).
    public var excludesSimpleHostnames = false

    /// - Parameter list: the entries; blank ones are skipped.
    public init(_ list: [String] = []) {
        entries = list.compactMap(Self.entry)
    }

    /// Whether a request to `host` goes direct.
    public func matches(host: String) -> Bool {
        guard !entries.isEmpty || excludesSimpleHostnames else { return false }
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        let address = Self.addressBytes(name)
        if excludesSimpleHostnames, address == nil, !name.contains(".") { return true }
        return entries.contains { entry in
            switch entry {
            case .everyHost:
                true
            case .domain(let domain):
                address == nil && (name == domain || name.hasSuffix("." + domain))
            case .network(let network, let prefixLength):
                address.map { Self.address($0, isIn: network, prefixLength: prefixLength) } ?? false
            }
        }
    }

    static func entry(_ text: String) -> Entry? {
        var entry = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !entry.isEmpty else { return nil }
        if entry == "*" { return .everyHost }
        if let slash = entry.firstIndex(of: "/") {
            let prefix = Int(entry[entry.index(after: slash)...])
            guard let prefix, let bytes = networkBytes(String(entry[..<slash])), (0...bytes.count * 8).contains(prefix) else { return nil }
            return .network(bytes, prefixLength: prefix)
        }
        if entry.hasPrefix("[") {
            // `[::1]` or `[::1]:443`.
            guard let close = entry.firstIndex(of: "]") else { return nil }
            entry = String(entry[entry.index(after: entry.startIndex)..<close])
        } else if entry.filter({ $0 == ":" }).count == 1 {
            // `name:port` or `1.2.3.4:port`: the port is ignored.
            entry = String(entry[..<entry.firstIndex(of: ":")!])
        }
        if let bytes = addressBytes(entry) { return .network(bytes, prefixLength: bytes.count * 8) }
        if entry.hasPrefix("*.") { entry.removeFirst(2) } else if entry.hasPrefix(".") { entry.removeFirst() }
        if entry.hasSuffix(".") { entry.removeLast() }
        return entry.isEmpty ? nil : .domain(entry)
    }

    /// A network's address, allowing IPv4's short form (`169.254` for `169.254.0.0`).
    private static func networkBytes(_ text: String) -> [UInt8]? {
        if let bytes = addressBytes(text) { return bytes }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        return addressBytes(parts.joined(separator: ".") + String(repeating: ".0", count: 4 - parts.count))
    }

    /// The bytes of an IPv4 or IPv6 address in text, or nil for anything else.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    private static func address(_ address: [UInt8], isIn network: [UInt8], prefixLength: Int) -> Bool {
        guard address.count == network.count else { return false }
        var remaining = prefixLength
        for (byte, networkByte) in zip(address, network) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if byte & mask != networkByte & mask { return false }
            remaining -= 8
        }
        return true
    }
}
