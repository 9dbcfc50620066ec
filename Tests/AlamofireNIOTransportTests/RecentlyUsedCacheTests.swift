import Foundation
import HTTPBinServer
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import NIOSSL
import Testing

@testable import AlamofireNIOTransport

@Suite struct RecentlyUsedCacheTests {
    @Test func theLeastRecentlyUsedValueIsDroppedFirst() {
        var cache = RecentlyUsedCache<String, Int>(limit: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        #expect(cache.value(for: "a") == 1)  // "b" is now the least recently used
        cache.insert(3, for: "c")
        #expect(cache.count == 2)
        #expect(cache.value(for: "b") == nil)
        #expect(cache.value(for: "a") == 1)
        #expect(cache.value(for: "c") == 3)
        // Replacing a value keeps the count and makes the key the most recent.
        cache.insert(4, for: "a")
        cache.insert(5, for: "d")
        #expect(cache.count == 2)
        #expect(cache.value(for: "a") == 4)
        #expect(cache.value(for: "c") == nil)
        #expect(cache.value(for: "d") == 5)
    }

    /// Identities compare by object: before the bound, a context made for each new identity was kept
    /// for the transport's whole life.
    @Test func theFactoryKeepsTheContextsOfTheSixteenIdentitiesUsedLast() throws {
        let certificates = try TestCertificates.generate()
        let factory = ConnectionFactory(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, tls: .init(), decompressionRatio: nil, logger: .init(label: "test"))
        let url = try #require(URL(string: "https://127.0.0.1:1/"))
        // Held here, so that a new context cannot take a dropped one's address.
        var contexts: [NIOSSLContext] = []
        var origins: [Origin] = []
        for _ in 0..<20 {
            let identity = try TransportClientIdentity(
                certificates: [certificates.client.certificateDER], privateKey: Array(certificates.client.privateKeyPEM.utf8))
            let origin = try Origin(url: url, clientIdentity: identity)
            origins.append(origin)
            contexts.append(try factory.tlsSetup(for: origin).context)
        }
        #expect(factory.otherContexts.withLockedValue { $0.count } == 16)
        // The most recent identity's context is reused; the first one's was dropped and is made anew.
        #expect(try factory.tlsSetup(for: origins[19]).context === contexts[19])
        #expect(try factory.tlsSetup(for: origins[0]).context !== contexts[0])
        #expect(factory.otherContexts.withLockedValue { $0.count } == 16)
    }
}
