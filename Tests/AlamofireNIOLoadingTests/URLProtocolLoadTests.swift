import AFSynchronization
import Foundation
import Synchronization
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A load through a URL protocol ends once, whichever comes first: the protocol's answer or a stop.
@Suite(.serialized) struct URLProtocolLoadTests {
    /// Counts its starts and stops; answers nothing.
    final class SilentProtocol: URLProtocol {
        static let starts = Mutex(0)
        static let stops = Mutex(0)
        override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "silent.test" }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
        override func startLoading() { Self.starts.withLock { $0 += 1 } }
        override func stopLoading() { Self.stops.withLock { $0 += 1 } }
    }

    final class Outcomes: Sendable {
        let ended = Mutex<[String]>([])
    }

    static func load(_ outcomes: Outcomes) -> URLProtocolLoad {
        URLProtocolLoad(onData: { _ in }) { outcome in
            let name =
                switch outcome {
                case .loaded: "loaded"
                case .redirected: "redirected"
                case .failed(let error): "failed \(error.code.rawValue)"
                }
            outcomes.ended.withLock { $0.append(name) }
        }
    }

    /// A cancel that lands before the start: the protocol never starts, and the load ends cancelled.
    @Test func aStopBeforeTheStartEndsTheLoadWithoutStartingIt() {
        let outcomes = Outcomes()
        let load = Self.load(outcomes)
        let url = URL(string: "https://silent.test/x")!
        let startsBefore = SilentProtocol.starts.withLock { $0 }
        load.stop(url: url)
        load.start(SilentProtocol.self, request: URLRequest(url: url), body: nil)
        #expect(SilentProtocol.starts.withLock { $0 } == startsBefore)
        #expect(outcomes.ended.withLock { $0 } == ["failed \(URLError.cancelled.rawValue)"])
    }

    @Test func aStopAfterTheStartStopsTheProtocolOnce() {
        let outcomes = Outcomes()
        let load = Self.load(outcomes)
        let url = URL(string: "https://silent.test/y")!
        let stopsBefore = SilentProtocol.stops.withLock { $0 }
        load.start(SilentProtocol.self, request: URLRequest(url: url), body: nil)
        load.stop(url: url)
        load.stop(url: url)
        #expect(SilentProtocol.stops.withLock { $0 } == stopsBefore + 1)
        #expect(outcomes.ended.withLock { $0 } == ["failed \(URLError.cancelled.rawValue)"])
    }

    @Test func thePlatformsOwnClassesAreLeftOut() {
        let classes = URLProtocolLoad.userClasses([SilentProtocol.self] + (URLSessionConfiguration.default.protocolClasses ?? []))
        #expect(classes.map { ObjectIdentifier($0) } == [ObjectIdentifier(SilentProtocol.self)])
    }
}
