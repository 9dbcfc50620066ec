package import NIOCore

/// The client side of a SOCKS5 handshake (RFC 1928) as a value: the greeting, user name and
/// password authentication when the proxy asks for it (RFC 1929), and the `CONNECT` request. Each
/// step takes the proxy's bytes and says what to send or how it ended.
package struct SOCKS5Handshake {
    /// Where the origin is: a name the proxy resolves, or an address.
    package enum Target: Equatable {
        case name(String, port: Int)
        case address(SocketAddress)
    }

    package enum Action: Equatable {
        /// Send these bytes.
        case send([UInt8])
        /// More bytes are needed.
        case wait
        /// The tunnel is open; bytes after the reply belong to the origin.
        case established(leftOver: [UInt8])
        case failed(Failure)
    }

    package enum Failure: Equatable {
        /// The proxy accepts none of the methods offered (it wants credentials when none were given).
        case noAcceptableMethod
        /// The proxy refused the user name and password.
        case authenticationFailed
        /// The proxy could not or would not connect to the origin (the RFC 1928 reply code).
        case refused(reply: UInt8)
        /// The bytes are not SOCKS5.
        case malformed
        /// A field is longer than SOCKS5 can send (255 bytes): it fails before anything is sent,
        /// never cut short to name another host or user.
        case tooLong(Field)
    }

    /// The fields SOCKS5 sends with a one-byte length.
    package enum Field: Equatable {
        case hostName
        case userName
        case password
    }

    private enum State {
        case idle
        case awaitingMethod
        case awaitingAuthentication
        case awaitingReply
        case done
    }

    private var state = State.idle
    private var received: [UInt8] = []
    private let target: Target
    private let credentials: TransportProxy.Credentials?

    package init(target: Target, credentials: TransportProxy.Credentials?) {
        self.target = target
        self.credentials = credentials
    }

    /// The greeting: no authentication, and user name and password when there are credentials.
    /// A field too long to send fails here, before any byte goes out.
    package mutating func start() -> Action {
        if case .name(let name, _) = target, name.utf8.count > 255 { return fail(.tooLong(.hostName)) }
        if let credentials {
            if credentials.user.utf8.count > 255 { return fail(.tooLong(.userName)) }
            if credentials.password.utf8.count > 255 { return fail(.tooLong(.password)) }
        }
        state = .awaitingMethod
        return .send(credentials == nil ? [5, 1, 0] : [5, 2, 0, 2])
    }

    /// The proxy sent `bytes`.
    package mutating func receive(_ bytes: some Sequence<UInt8>) -> Action {
        received.append(contentsOf: bytes)
        switch state {
        case .idle, .done:
            return .failed(.malformed)
        case .awaitingMethod:
            guard received.count >= 2 else { return .wait }
            let (version, method) = (received[0], received[1])
            received.removeFirst(2)
            guard version == 5 else { return fail(.malformed) }
            switch method {
            case 0:
                state = .awaitingReply
                return .send(connectRequest())
            case 2 where credentials != nil:
                state = .awaitingAuthentication
                return .send(authenticationRequest())
            default:
                return fail(.noAcceptableMethod)
            }
        case .awaitingAuthentication:
            guard received.count >= 2 else { return .wait }
            let (version, status) = (received[0], received[1])
            received.removeFirst(2)
            guard version == 1 else { return fail(.malformed) }
            guard status == 0 else { return fail(.authenticationFailed) }
            state = .awaitingReply
            return .send(connectRequest())
        case .awaitingReply:
            // VER, REP, RSV, ATYP, BND.ADDR (by type), BND.PORT.
            guard received.count >= 5 else { return .wait }
            guard received[0] == 5 else { return fail(.malformed) }
            guard received[1] == 0 else { return fail(.refused(reply: received[1])) }
            let addressLength: Int
            switch received[3] {
            case 1: addressLength = 4
            case 3: addressLength = 1 + Int(received[4])
            case 4: addressLength = 16
            default: return fail(.malformed)
            }
            let length = 4 + addressLength + 2
            guard received.count >= length else { return .wait }
            state = .done
            let leftOver = Array(received[length...])
            received = []
            return .established(leftOver: leftOver)
        }
    }

    private mutating func fail(_ failure: Failure) -> Action {
        state = .done
        return .failed(failure)
    }

    /// RFC 1929: VER 1, the user name and the password, each with its length (at most 255 bytes,
    /// checked by ``start()``).
    private func authenticationRequest() -> [UInt8] {
        let user = Array((credentials?.user ?? "").utf8)
        let password = Array((credentials?.password ?? "").utf8)
        return [1, UInt8(user.count)] + user + [UInt8(password.count)] + password
    }

    /// VER 5, CMD 1 (connect), RSV, then the target and its port.
    private func connectRequest() -> [UInt8] {
        var bytes: [UInt8] = [5, 1, 0]
        let port: Int
        switch target {
        case .name(let name, let namePort):
            let encoded = Array(name.utf8)  // At most 255 bytes, checked by start().
            bytes += [3, UInt8(encoded.count)] + encoded
            port = namePort
        case .address(let address):
            let raw = address.ipAddress.flatMap(ProxyExceptions.addressBytes) ?? []
            bytes += [raw.count == 16 ? 4 : 1] + (raw.isEmpty ? [0, 0, 0, 0] : raw)
            port = address.port ?? 0
        }
        return bytes + [UInt8(truncatingIfNeeded: port >> 8), UInt8(truncatingIfNeeded: port)]
    }
}
