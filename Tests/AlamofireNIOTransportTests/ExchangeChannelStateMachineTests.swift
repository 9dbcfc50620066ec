import NIOCore
import NIOHTTP1
import Testing

@testable import AlamofireNIOTransport

@Suite struct ExchangeChannelStateMachineTests {
    typealias Machine = ExchangeChannelStateMachine
    let ok = HTTPResponseHead(version: .http1_1, status: .ok)
    let okClose = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Connection": "close"])

    @Test func idleConnectionWantsToReadToNoticeClose() {
        let machine = Machine()
        #expect(machine.isIdle)
        #expect(machine.wantsRead)
    }

    @Test func simpleExchangeReturnsToIdle() {
        var machine = Machine()
        #expect(machine.startExchange(keepAlive: true, hasStreamedBody: false) == .sendRequest)
        #expect(machine.wantsRead)
        #expect(machine.responseHead(ok) == .forwardHead(ok))
        #expect(machine.exchange?.receivedResponseBytes == true)
        #expect(machine.responseBody(ByteBuffer(string: "a")) == .forwardBody(ByteBuffer(string: "a")))
        #expect(machine.responseEnd(nil) == .completeExchange(trailers: nil, reusable: true))
        #expect(machine.state == .idle)
    }

    @Test func connectionCloseInResponseMakesItNotReusable() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: false)
        _ = machine.responseHead(okClose)
        #expect(machine.responseEnd(nil) == .completeExchange(trailers: nil, reusable: false))
        #expect(machine.state == .closed)
    }

    @Test func connectionCloseInRequestMakesItNotReusable() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: false, hasStreamedBody: false)
        _ = machine.responseHead(ok)
        #expect(machine.responseEnd(["x": "y"]) == .completeExchange(trailers: ["x": "y"], reusable: false))
    }

    @Test func streamedBodyMustFinishBeforeReuse() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: true)
        #expect(machine.requestBodyFinished() == .none)
        _ = machine.responseHead(ok)
        #expect(machine.responseEnd(nil) == .completeExchange(trailers: nil, reusable: true))
    }

    @Test func bodyFinishingAfterResponseCompletesTheExchange() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: true)
        _ = machine.responseHead(ok)
        // The server answered early while the body was still going out: deliver, then close.
        #expect(machine.responseEnd(nil) == .completeExchangeAndClose(trailers: nil))
        #expect(machine.state == .closed)
        #expect(machine.requestBodyFinished() == .none)
    }

    @Test func demandControlsReadsDuringTheBody() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: false)
        _ = machine.responseHead(ok)
        machine.consumerDemand(false)
        #expect(!machine.wantsRead)
        machine.consumerDemand(true)
        #expect(machine.wantsRead)
        _ = machine.responseEnd(nil)
        #expect(machine.wantsRead)  // idle again
    }

    @Test func closeBeforeResponseIsRetryable() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: false)
        #expect(machine.channelInactive() == .failExchange(.closedBeforeResponse, close: false))
        #expect(machine.state == .closed)
        #expect(!machine.wantsRead)
    }

    @Test func closeDuringResponseIsNot() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: false)
        _ = machine.responseHead(ok)
        #expect(machine.channelInactive() == .failExchange(.closedDuringResponse, close: false))
    }

    @Test func closeWhileIdleTellsThePool() {
        var machine = Machine()
        #expect(machine.channelInactive() == .closeIdleConnection)
        #expect(machine.channelInactive() == .none)
    }

    @Test func errorsFailTheExchangeAndClose() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: true)
        #expect(machine.errorCaught() == .failExchange(.errorBeforeResponse, close: true))
        #expect(machine.errorCaught() == .none)
        var afterHead = Machine()
        _ = afterHead.startExchange(keepAlive: true, hasStreamedBody: false)
        _ = afterHead.responseHead(ok)
        #expect(afterHead.errorCaught() == .failExchange(.error, close: true))
        var idle = Machine()
        #expect(idle.errorCaught() == .closeIdleConnection)
    }

    @Test func cancelAndTimeoutInEveryPhase() {
        for phase in 0..<3 {
            var cancelled = Machine()
            var timedOut = Machine()
            _ = cancelled.startExchange(keepAlive: true, hasStreamedBody: true)
            _ = timedOut.startExchange(keepAlive: true, hasStreamedBody: true)
            if phase >= 1 {
                _ = cancelled.requestBodyFinished()
                _ = timedOut.requestBodyFinished()
            }
            if phase >= 2 {
                _ = cancelled.responseHead(ok)
                _ = timedOut.responseHead(ok)
            }
            #expect(cancelled.cancel() == .failExchange(.cancelled, close: true))
            #expect(timedOut.idleTimeoutFired() == .failExchange(.timedOut, close: true))
            #expect(cancelled.state == .closed)
        }
    }

    @Test func cancelWhileIdleClosesTheConnection() {
        var machine = Machine()
        #expect(machine.cancel() == .closeIdleConnection)
    }

    @Test func unexpectedResponsePartsAreErrors() {
        var idle = Machine()
        #expect(idle.responseHead(ok) == .closeIdleConnection)
        var waiting = Machine()
        _ = waiting.startExchange(keepAlive: true, hasStreamedBody: false)
        #expect(waiting.responseBody(ByteBuffer()) == .failExchange(.errorBeforeResponse, close: true))
        var twice = Machine()
        _ = twice.startExchange(keepAlive: true, hasStreamedBody: false)
        _ = twice.responseHead(ok)
        #expect(twice.responseHead(ok) == .failExchange(.error, close: true))
    }

    @Test func startingOnAClosedConnectionIsRetryable() {
        var machine = Machine()
        _ = machine.channelInactive()
        #expect(machine.startExchange(keepAlive: true, hasStreamedBody: false) == .failExchange(.closedBeforeResponse, close: false))
    }

    @Test func startingTwiceIsRefused() {
        var machine = Machine()
        _ = machine.startExchange(keepAlive: true, hasStreamedBody: false)
        #expect(machine.startExchange(keepAlive: true, hasStreamedBody: false) == .failExchange(.error, close: false))
    }
}
