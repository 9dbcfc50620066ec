import Foundation

/// Reachability on Linux, in three parts: this file mirrors the kernel's interfaces and routes as a
/// value built from rtnetlink messages (``RoutingTable/apply(_:)``) and answers "is there a usable
/// route?"; ``NetlinkSocket`` subscribes to the kernel's link, address and route changes and hands
/// their messages over as they come (a read source, no polling); ``NetworkReachabilityManager``
/// turns the table's answer into Alamofire's statuses. Tests feed the table (or the manager, through
/// its source) hand-made messages, so they change nothing on the host.

/// What an interface is, in the terms of Network framework's `NWInterface.InterfaceType`.
package enum InterfaceKind: Sendable, Equatable {
    case wifi, cellular, wiredEthernet, loopback, other
}

/// The kernel's interfaces and routes as rtnetlink reports them: enough to say whether a route
/// leaves through an interface that is up and running.
package struct RoutingTable: Sendable, Equatable {
    package struct Link: Sendable, Equatable {
        var name: String
        var flags: UInt32
        var hardwareType: UInt16

        var isUsable: Bool { flags & RTNetlink.iffUp != 0 && flags & RTNetlink.iffRunning != 0 }

        var kind: InterfaceKind {
            if flags & RTNetlink.iffLoopback != 0 || hardwareType == RTNetlink.arphrdLoopback { return .loopback }
            if name.hasPrefix("wwan") || name.hasPrefix("rmnet") || name.hasPrefix("ccmni") || hardwareType == RTNetlink.arphrdRawIP {
                return .cellular
            }
            if name.hasPrefix("wl") { return .wifi }
            if hardwareType == RTNetlink.arphrdEther { return .wiredEthernet }
            return .other
        }
    }

    package struct Route: Sendable, Hashable {
        /// `AF_INET` or `AF_INET6`.
        var family: UInt8
        /// The destination's bytes (empty for a default route) and prefix length.
        var destination: [UInt8]
        var prefixLength: UInt8
        var table: UInt32
        var type: UInt8
        /// The interface index the route leaves through.
        var outputInterface: Int32
    }

    private(set) var links: [Int32: Link] = [:]
    private(set) var routes: Set<Route> = []

    /// Applies rtnetlink messages: new and deleted links and routes (address messages change nothing
    /// here; the routes they imply come as route messages of their own).
    mutating func apply(_ messages: [RTNetlink.Message]) {
        for message in messages {
            switch message {
            case .newLink(let index, let link):
                links[index] = link
                // Linux flushes a link's IPv4 routes when it goes down, without a route message for each.
                if link.flags & RTNetlink.iffUp == 0 { routes = routes.filter { $0.outputInterface != index } }
            case .deletedLink(let index):
                links[index] = nil
                routes = routes.filter { $0.outputInterface != index }
            case .newRoute(let route): routes.insert(route)
            case .deletedRoute(let route): routes.remove(route)
            case .other: break
            }
        }
    }

    /// The interface a default route (IPv4 or IPv6) leaves through, when it is up and running and not
    /// the loopback; `accepting` narrows the interfaces that count.
    func defaultRouteInterface(accepting: (InterfaceKind) -> Bool = { _ in true }) -> Link? {
        routes.filter { $0.prefixLength == 0 && $0.table == RTNetlink.tableMain && $0.type == RTNetlink.routeUnicast }
            .sorted { ($0.family, $0.outputInterface) < ($1.family, $1.outputInterface) }
            .lazy.compactMap { links[$0.outputInterface] }
            .first { $0.isUsable && $0.kind != .loopback && accepting($0.kind) }
    }

    /// The interface the kernel would send a packet to `address` (4 or 16 bytes) through: the most
    /// specific route of the main or local table, when its interface is up (the loopback counts for
    /// the host's own addresses).
    func interface(towards address: [UInt8]) -> Link? {
        let family = address.count == 4 ? RTNetlink.afInet : RTNetlink.afInet6
        let candidates = routes.filter { route in
            route.family == family && (route.table == RTNetlink.tableMain || route.table == RTNetlink.tableLocal)
                && (route.type == RTNetlink.routeUnicast || route.type == RTNetlink.routeLocal)
                && Self.prefix(route.destination, length: Int(route.prefixLength), contains: address)
        }
        for route in candidates.sorted(by: { $0.prefixLength > $1.prefixLength }) {
            guard let link = links[route.outputInterface] else { continue }
            // The loopback is up without being "running" in some containers: `UP` is enough for it.
            if link.isUsable || (link.kind == .loopback && link.flags & RTNetlink.iffUp != 0) { return link }
        }
        return nil
    }

    static func prefix(_ destination: [UInt8], length: Int, contains address: [UInt8]) -> Bool {
        guard length > 0 else { return true }
        guard destination.count == address.count, length <= address.count * 8 else { return false }
        let whole = length / 8
        guard destination.prefix(whole) == address.prefix(whole) else { return false }
        let bits = length % 8
        guard bits > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - bits)
        return destination[whole] & mask == address[whole] & mask
    }
}

/// A routing table being followed from a source's messages: whole once the link and route dumps
/// have both ended, then kept current by every change. Shared by the reachability manager and
/// `OfflineRetrier`'s path monitor.
struct FollowedRoutingTable: Sendable {
    private(set) var table = RoutingTable()
    /// The link and route dumps still to end before the table is whole.
    private var dumpsPending = 2

    /// The table, once whole.
    var whole: RoutingTable? { dumpsPending == 0 ? table : nil }

    /// Applies what a source delivered; returns the table once it is whole. Lost messages make the
    /// table start over: it is whole again once the new dumps have ended.
    mutating func apply(_ event: RoutingSourceEvent) -> RoutingTable? {
        switch event {
        case .datagram(let datagram):
            return apply(RTNetlink.parse(datagram))
        case .messagesLost:
            self = FollowedRoutingTable()
            return nil
        }
    }

    /// Applies one datagram's messages; returns the table once it is whole.
    mutating func apply(_ messages: [RTNetlink.Message]) -> RoutingTable? {
        table.apply(messages)
        dumpsPending = max(0, dumpsPending - RTNetlink.dumpEnds(in: messages))
        return whole
    }
}

/// rtnetlink's wire format (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h): the constants
/// this code needs, and a parser of the messages it reads. Every length is checked; a malformed
/// message ends the parse of its datagram.
package enum RTNetlink {
    static let afInet: UInt8 = 2
    static let afInet6: UInt8 = 10
    static let iffUp: UInt32 = 0x1
    static let iffLoopback: UInt32 = 0x8
    static let iffRunning: UInt32 = 0x40
    static let arphrdEther: UInt16 = 1
    static let arphrdRawIP: UInt16 = 519
    static let arphrdLoopback: UInt16 = 772
    static let tableMain: UInt32 = 254
    static let tableLocal: UInt32 = 255
    static let routeUnicast: UInt8 = 1
    static let routeLocal: UInt8 = 2

    static let messageDone: UInt16 = 3
    static let messageError: UInt16 = 2

    /// How many dumps `messages` end: each `NLMSG_DONE`, and each `NLMSG_ERROR` (a dump the kernel refused).
    static func dumpEnds(in messages: [Message]) -> Int {
        messages.count { $0 == .other(type: messageDone) || $0 == .other(type: messageError) }
    }
    static let newLink: UInt16 = 16
    static let deleteLink: UInt16 = 17
    static let getLink: UInt16 = 18
    static let newRoute: UInt16 = 24
    static let deleteRoute: UInt16 = 25
    static let getRoute: UInt16 = 26

    static let linkAttributeName: UInt16 = 3
    static let routeAttributeDestination: UInt16 = 1
    static let routeAttributeOutputInterface: UInt16 = 4
    static let routeAttributeTable: UInt16 = 15

    /// The multicast groups subscribed to: links, IPv4 and IPv6 addresses and routes.
    static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    package enum Message: Sendable, Equatable {
        case newLink(index: Int32, RoutingTable.Link)
        case deletedLink(index: Int32)
        case newRoute(RoutingTable.Route)
        case deletedRoute(RoutingTable.Route)
        /// Anything else; `done` marks the end of a dump, `error` an error or acknowledgement.
        case other(type: UInt16)
    }

    /// The messages in one datagram.
    package static func parse(_ bytes: [UInt8]) -> [Message] {
        var messages: [Message] = []
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(read32(bytes, offset))
            let type = read16(bytes, offset + 4)
            guard length >= 16, offset + length <= bytes.count else { break }
            let body = Array(bytes[(offset + 16)..<(offset + length)])
            messages.append(parseMessage(type: type, body: body))
            offset += align(length)
        }
        return messages
    }

    private static func parseMessage(type: UInt16, body: [UInt8]) -> Message {
        switch type {
        case newLink, deleteLink:
            // struct ifinfomsg: family, pad, type (u16), index (i32), flags (u32), change (u32).
            guard body.count >= 16 else { return .other(type: type) }
            let index = Int32(bitPattern: read32(body, 4))
            if type == deleteLink { return .deletedLink(index: index) }
            let attributes = parseAttributes(body, from: 16)
            let name = attributes[linkAttributeName].map { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } ?? ""
            return .newLink(index: index, RoutingTable.Link(name: name, flags: read32(body, 8), hardwareType: read16(body, 2)))
        case newRoute, deleteRoute:
            // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type (u8 each), flags (u32).
            guard body.count >= 12 else { return .other(type: type) }
            let attributes = parseAttributes(body, from: 12)
            let table = attributes[routeAttributeTable].flatMap { $0.count >= 4 ? read32($0, 0) : nil } ?? UInt32(body[4])
            let outputInterface = attributes[routeAttributeOutputInterface].flatMap {
                $0.count >= 4 ? Int32(bitPattern: read32($0, 0)) : nil
            }
            let route = RoutingTable.Route(
                family: body[0], destination: attributes[routeAttributeDestination] ?? [], prefixLength: body[1], table: table,
                type: body[7], outputInterface: outputInterface ?? 0)
            return type == newRoute ? .newRoute(route) : .deletedRoute(route)
        default:
            return .other(type: type)
        }
    }

    /// The `rtattr`s from `offset`: type → value (the last one of a type wins).
    private static func parseAttributes(_ bytes: [UInt8], from start: Int) -> [UInt16: [UInt8]] {
        var attributes: [UInt16: [UInt8]] = [:]
        var offset = start
        while offset + 4 <= bytes.count {
            let length = Int(read16(bytes, offset))
            guard length >= 4, offset + length <= bytes.count else { break }
            attributes[read16(bytes, offset + 2) & 0x3FFF] = Array(bytes[(offset + 4)..<(offset + length)])
            offset += align(length)
        }
        return attributes
    }

    static func align(_ length: Int) -> Int { (length + 3) & ~3 }

    static func read16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    // MARK: Making messages (dump requests, and the tests' messages)

    /// A message: the 16-byte header, then `body` padded to 4 bytes.
    static func message(type: UInt16, flags: UInt16, sequence: UInt32 = 0, body: [UInt8]) -> [UInt8] {
        let padded = body + [UInt8](repeating: 0, count: align(body.count) - body.count)
        return bytes32(UInt32(16 + padded.count)) + bytes16(type) + bytes16(flags) + bytes32(sequence) + bytes32(0) + padded
    }

    /// A dump request for every link (`getLink`) or route (`getRoute`).
    static func dumpRequest(_ type: UInt16, sequence: UInt32) -> [UInt8] {
        // NLM_F_REQUEST | NLM_F_DUMP; an empty ifinfomsg or rtmsg of family AF_UNSPEC.
        message(type: type, flags: 0x1 | 0x300, sequence: sequence, body: [UInt8](repeating: 0, count: type == getLink ? 16 : 12))
    }

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let header = bytes16(UInt16(4 + value.count)) + bytes16(type)
        return header + value + [UInt8](repeating: 0, count: align(value.count) - value.count)
    }

    static func bytes16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func bytes32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
}
