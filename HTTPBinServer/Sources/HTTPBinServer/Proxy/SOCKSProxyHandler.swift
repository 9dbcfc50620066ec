import NIOCore

/// The SOCKS5 side of the test proxy (RFC 1928, `CONNECT` only; with credentials configured, user
/// name and password authentication, RFC 1929): reads the greeting and the request, connects to the
/// target (resolving a name itself), answers, and from then on relays bytes both ways.
final class SOCKSProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private enum State {
        case greeting
        case authentication
        case request
        case connecting
    }

    private let recorder: ProxyRecorder
    private let credentials: (user: String, password: String)?
    private var state = State.greeting
    private var received = ByteBuffer()

    init(recorder: ProxyRecorder, credentials: (user: String, password: String)?) {
        self.recorder = recorder
        self.credentials = credentials
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        received.writeBuffer(&chunk)
        switch state {
        case .greeting:
            // VER, NMETHODS, METHODS...
            guard received.readableBytes >= 2, let count = received.getInteger(at: received.readerIndex + 1, as: UInt8.self),
                let methods = received.getBytes(at: received.readerIndex + 2, length: Int(count))
            else { return }
            received.moveReaderIndex(forwardBy: 2 + Int(count))
            if credentials == nil {
                state = .request
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: [5, 0])), promise: nil)
            } else if methods.contains(2) {
                state = .authentication
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: [5, 2])), promise: nil)
            } else {
                recorder.update { $0.authenticationChallenges += 1 }
                return write([5, 0xFF], context: context, thenClose: true)
            }
            if received.readableBytes > 0 { channelRead(context: context, data: NIOAny(ByteBuffer())) }
        case .authentication:
            readCredentials(context: context)
        case .request:
            readRequest(context: context)
        case .connecting:
            break
        }
    }

    /// VER 1, ULEN, UNAME, PLEN, PASSWD.
    private func readCredentials(context: ChannelHandlerContext) {
        var view = received
        guard view.readInteger(as: UInt8.self) != nil, let userLength = view.readInteger(as: UInt8.self),
            let user = view.readString(length: Int(userLength)), let passwordLength = view.readInteger(as: UInt8.self),
            let password = view.readString(length: Int(passwordLength))
        else { return }
        received = view
        recorder.update { $0.authorizations.append("socks \(user):\(password)") }
        guard let credentials, credentials.user == user, credentials.password == password else {
            recorder.update { $0.authenticationChallenges += 1 }
            return write([1, 1], context: context, thenClose: true)
        }
        state = .request
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: [1, 0])), promise: nil)
        if received.readableBytes > 0 { readRequest(context: context) }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext, thenClose: Bool) {
        let channel = context.channel
        let written = channel.writeAndFlush(ByteBuffer(bytes: bytes))
        if thenClose { written.whenComplete { _ in channel.close(promise: nil) } }
    }

    /// VER, CMD, RSV, ATYP, DST.ADDR, DST.PORT.
    private func readRequest(context: ChannelHandlerContext) {
        var view = received
        guard let header = view.readBytes(length: 4) else { return }
        let host: String
        let isName: Bool
        switch header[3] {
        case 1:
            guard let bytes = view.readBytes(length: 4) else { return }
            host = bytes.map(String.init).joined(separator: ".")
            isName = false
        case 3:
            guard let length = view.readInteger(as: UInt8.self), let name = view.readString(length: Int(length)) else { return }
            host = name
            isName = true
        case 4:
            guard let bytes = view.readBytes(length: 16) else { return }
            host = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(
                separator: ":")
            isName = false
        default:
            return reply(7, context: context, thenClose: true)
        }
        guard let port = view.readInteger(as: UInt16.self) else { return }
        received = view
        guard header[0] == 5, header[1] == 1 else { return reply(7, context: context, thenClose: true) }
        state = .connecting
        recorder.update {
            $0.socksTargets.append("\(host):\(port)")
            $0.socksTargetWasName.append(isName)
        }
        let client = context.channel
        let upstream = ProxyRelayHandler.connect(host: host, port: Int(port), relayingTo: client, on: context.eventLoop)
        upstream.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .failure:
                // Connection refused.
                reply(5, context: context, thenClose: true)
            case .success(let upstream):
                reply(0, context: context, thenClose: false)
                do {
                    let pipeline = context.pipeline.syncOperations
                    try pipeline.addHandler(ProxyRelayHandler(partner: upstream))
                    if received.readableBytes > 0 { upstream.writeAndFlush(received, promise: nil) }
                    pipeline.removeHandler(context: context, promise: nil)
                } catch {
                    upstream.close(promise: nil)
                    client.close(promise: nil)
                }
            }
        }
    }

    /// VER, REP, RSV, ATYP (IPv4), BND.ADDR 0.0.0.0, BND.PORT 0.
    private func reply(_ code: UInt8, context: ChannelHandlerContext, thenClose: Bool) {
        let channel = context.channel
        let written = channel.writeAndFlush(ByteBuffer(bytes: [5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
        if thenClose { written.whenComplete { _ in channel.close(promise: nil) } }
    }
}
