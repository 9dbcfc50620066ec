import NIOCore
import Testing

@testable import AlamofireNIOTransport

/// The SOCKS5 client handshake as a value: what it sends, and how it reads each answer.
@Suite struct SOCKS5HandshakeTests {
    let credentials = TransportProxy.Credentials(user: "al", password: "pw")

    @Test func withoutCredentialsItOffersNoAuthenticationAndSendsTheName() {
        var handshake = SOCKS5Handshake(target: .name("origin.test", port: 443), credentials: nil)
        #expect(handshake.start() == .send([5, 1, 0]))
        #expect(handshake.receive([5]) == .wait)
        #expect(handshake.receive([0]) == .send([5, 1, 0, 3, 11] + Array("origin.test".utf8) + [1, 187]))
        // The reply, split, with an IPv4 bound address, then two bytes of the origin's.
        #expect(handshake.receive([5, 0, 0, 1, 10]) == .wait)
        #expect(handshake.receive([0, 0, 1, 0x1F, 0x90, 0x16, 0x03]) == .established(leftOver: [0x16, 0x03]))
    }

    @Test func withCredentialsItAuthenticatesWhenAsked() throws {
        var handshake = SOCKS5Handshake(
            target: .address(try SocketAddress(ipAddress: "10.1.2.3", port: 80)), credentials: credentials)
        #expect(handshake.start() == .send([5, 2, 0, 2]))
        #expect(handshake.receive([5, 2]) == .send([1, 2] + Array("al".utf8) + [2] + Array("pw".utf8)))
        #expect(handshake.receive([1, 0]) == .send([5, 1, 0, 1, 10, 1, 2, 3, 0, 80]))
        // A reply with a name as its bound address.
        #expect(handshake.receive([5, 0, 0, 3, 1, 0x61, 0, 80]) == .established(leftOver: []))
    }

    @Test func aProxyThatNeedsNoAuthenticationIsNotSentTheCredentials() throws {
        var handshake = SOCKS5Handshake(target: .address(try SocketAddress(ipAddress: "::1", port: 1)), credentials: credentials)
        _ = handshake.start()
        #expect(handshake.receive([5, 0]) == .send([5, 1, 0, 4] + Array(repeating: 0, count: 15) + [1, 0, 1]))
    }

    @Test func refusalsAndGarbageFail() {
        var noMethod = SOCKS5Handshake(target: .name("o", port: 1), credentials: nil)
        _ = noMethod.start()
        #expect(noMethod.receive([5, 0xFF]) == .failed(.noAcceptableMethod))
        var wantsPassword = SOCKS5Handshake(target: .name("o", port: 1), credentials: nil)
        _ = wantsPassword.start()
        #expect(wantsPassword.receive([5, 2]) == .failed(.noAcceptableMethod))
        var wrongPassword = SOCKS5Handshake(target: .name("o", port: 1), credentials: credentials)
        _ = wrongPassword.start()
        _ = wrongPassword.receive([5, 2])
        #expect(wrongPassword.receive([1, 1]) == .failed(.authenticationFailed))
        var wrongVersion = SOCKS5Handshake(target: .name("o", port: 1), credentials: credentials)
        _ = wrongVersion.start()
        _ = wrongVersion.receive([5, 2])
        #expect(wrongVersion.receive([5, 0]) == .failed(.malformed))
        var refused = SOCKS5Handshake(target: .name("o", port: 1), credentials: nil)
        _ = refused.start()
        _ = refused.receive([5, 0])
        #expect(refused.receive([5, 5, 0, 1, 0]) == .failed(.refused(reply: 5)))
        var garbage = SOCKS5Handshake(target: .name("o", port: 1), credentials: nil)
        _ = garbage.start()
        #expect(garbage.receive(Array("HTTP/1.1 400".utf8)) == .failed(.malformed))
        #expect(garbage.receive([5, 0]) == .failed(.malformed))
    }
}

/// SOCKS5 sends a host name, a user name and a password with a one-byte length: one longer than
/// 255 bytes fails before anything is sent, never cut short to name another host or user.
@Suite struct SOCKS5FieldLengthTests {
    @Test func fieldsOfExactly255BytesAreSentWhole() {
        let name = String(repeating: "a", count: 251) + ".com"
        let user = String(repeating: "u", count: 255)
        let password = String(repeating: "é", count: 127) + "p"  // 255 bytes in UTF-8.
        var handshake = SOCKS5Handshake(
            target: .name(name, port: 80), credentials: TransportProxy.Credentials(user: user, password: password))
        #expect(handshake.start() == .send([5, 2, 0, 2]))
        #expect(handshake.receive([5, 2]) == .send([1, 255] + Array(user.utf8) + [255] + Array(password.utf8)))
        #expect(handshake.receive([1, 0]) == .send([5, 1, 0, 3, 255] + Array(name.utf8) + [0, 80]))
    }

    @Test(arguments: [
        (String(repeating: "a", count: 252) + ".com", "u", "p", SOCKS5Handshake.Field.hostName),
        ("o", String(repeating: "u", count: 256), "p", .userName),
        ("o", "u", String(repeating: "é", count: 128), .password),
    ])
    func aLongerFieldFailsBeforeAnythingIsSent(name: String, user: String, password: String, field: SOCKS5Handshake.Field) {
        var handshake = SOCKS5Handshake(
            target: .name(name, port: 80), credentials: TransportProxy.Credentials(user: user, password: password))
        #expect(handshake.start() == .failed(.tooLong(field)))
        #expect(handshake.receive([5, 2]) == .failed(.malformed))
    }
}
