import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import AlamofireNIOTransport

/// ``EarlyExchangeFailure`` as a value: which failures before any response byte go again, and how.
@Suite struct EarlyExchangeFailureTests {
    /// A GET on a reused HTTP/1.1 connection with no body: everything allows a retry.
    static func failure(
        _ cause: EarlyExchangeFailure.Cause, replayable: Bool = true, reused: Bool = true, idempotent: Bool = true,
        handedOn: Bool = false, http2: Bool = false
    ) -> EarlyExchangeFailure {
        EarlyExchangeFailure(
            cause: cause, bodyIsReplayable: replayable, onReusedConnection: reused, methodIsIdempotent: idempotent,
            bodyHandedOn: handedOn, carriesOneExchange: http2)
    }

    @Test func aClosedReusedConnectionGoesAgainOnAFreshOneOverHTTP1AndANewStreamOverHTTP2() {
        #expect(Self.failure(.closed).verdict == .retry(.staleConnection, onFreshConnection: true))
        #expect(Self.failure(.carrierError).verdict == .retry(.staleConnection, onFreshConnection: true))
        #expect(Self.failure(.closed, http2: true).verdict == .retry(.staleConnection, onFreshConnection: false))
    }

    @Test func aNewConnectionsFailureOrABodyThatCannotBeSentAgainIsFinal() {
        #expect(Self.failure(.closed, reused: false).verdict == .fail)
        #expect(Self.failure(.closed, replayable: false).verdict == .fail)
        #expect(Self.failure(.carrierError, replayable: false).verdict == .fail)
    }

    /// A POST whose body bytes may have reached the server is not sent twice; one that sent none is.
    @Test func aMethodThatIsNotIdempotentGoesAgainOnlyIfNoBodyByteWasHandedOn() {
        #expect(Self.failure(.closed, idempotent: false, handedOn: true).verdict == .fail)
        #expect(Self.failure(.closed, idempotent: false, handedOn: false).verdict == .retry(.staleConnection, onFreshConnection: true))
        #expect(Self.failure(.closed, idempotent: true, handedOn: true).verdict == .retry(.staleConnection, onFreshConnection: true))
    }

    /// The server did not process a refused stream: it goes again on the same connection's next
    /// stream whatever its method and even on a new connection, unless its body cannot be sent again.
    @Test func aRefusedStreamGoesAgainWhateverItsMethodUnlessItsBodyIsSpent() {
        let refused = EarlyExchangeFailure.Cause.refusedStream(.refusedStream)
        #expect(
            Self.failure(refused, reused: false, idempotent: false, handedOn: true).verdict
                == .retry(.refusedStream, onFreshConnection: false))
        let aboveGoAway = EarlyExchangeFailure.Cause.refusedStream(.unprocessed(connectionAnswered: true))
        #expect(Self.failure(aboveGoAway, http2: true).verdict == .retry(.unprocessed(connectionAnswered: true), onFreshConnection: false))
        #expect(Self.failure(refused, replayable: false).verdict == .fail)
    }

    @Test func aRefusedCertificateABrokenProtocolAndTheTransportsOwnVerdictAreFinal() {
        for cause in [EarlyExchangeFailure.Cause.certificateRefused, .protocolViolation, .transportVerdict] {
            #expect(Self.failure(cause).verdict == .fail)
        }
    }

    /// ``ExchangeHandler/earlyFailureCause(_:lastError:refusal:certificateAlert:)`` takes the most
    /// telling cause: a refusal over a certificate alert, which is over a broken protocol; a close
    /// before the response over the transport's own verdict, which is over any other error.
    @Test func theHandlerClassifiesTheMostTellingCauseFirst() {
        let streamClosed = NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: .refusedStream)
        let alert = TransportError(.clientCertificateRejected, "the server refused the client's certificate")
        typealias Reason = RetryableExchangeError.Reason
        func classify(
            _ kind: ExchangeStateMachine.FailureKind, _ error: (any Error)?, _ refusal: Reason?, _ alert: TransportError?
        )
            -> EarlyExchangeFailure.Cause
        {
            ExchangeHandler.earlyFailureCause(kind, lastError: error, refusal: refusal, certificateAlert: alert).0
        }
        #expect(classify(.errorBeforeResponse, streamClosed, .refusedStream, alert) == .refusedStream(.refusedStream))
        // Without a refusal a closed stream is not one.
        #expect(classify(.closedBeforeResponse, streamClosed, nil, nil) == .closed)
        #expect(classify(.errorBeforeResponse, NIOHTTP2Errors.unableToParseFrame(), nil, alert) == .certificateRefused)
        #expect(classify(.errorBeforeResponse, NIOHTTP2Errors.unableToParseFrame(), nil, nil) == .protocolViolation)
        let verdict = TransportError.badResponse("the body was longer than its Content-Length")
        #expect(classify(.closedBeforeResponse, verdict, nil, nil) == .closed)
        #expect(classify(.errorBeforeResponse, verdict, nil, nil) == .transportVerdict)
        #expect(classify(.errorBeforeResponse, ChannelError.ioOnClosedChannel, nil, nil) == .carrierError)
    }

    /// A carrier's error, like its close, goes again only on a reused connection, and a body handed
    /// on of a method that is not idempotent is not sent twice.
    @Test func aCarrierErrorFollowsTheRulesOfAClose() {
        #expect(Self.failure(.carrierError, reused: false).verdict == .fail)
        #expect(Self.failure(.carrierError, idempotent: false, handedOn: true).verdict == .fail)
    }
}
