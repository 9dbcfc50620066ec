import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's answers to challenges and the refusals counted, as a plain value.
@Suite struct ChallengeAnswersTests {
    static let space = URLProtectionSpace(
        host: "example.com", port: 443, protocol: "https", realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    static let answered = ChallengeAnswers.Answered(
        credential: URLCredential(user: "u", password: "p", persistence: .forSession), space: space)

    @Test func withoutAnAnswerNothingIsSentAndNothingCounted() {
        var answers = ChallengeAnswers()
        let sent = answers.exchangeStarted()
        #expect(sent == nil)
        // The first 401 is the challenge itself, not a refusal.
        let settled = answers.responseReceived(statusCode: 401, offersStaleDigest: false)
        #expect(settled.refusedCount == 0 && settled.accepted == nil)
    }

    @Test func anAcceptedAnswerGivesItsCredentialOnceAndKeepsBeingSent() {
        var answers = ChallengeAnswers()
        answers.answer("Basic dTpw", from: Self.answered, isDigest: false)
        let sentFirst = answers.exchangeStarted()
        #expect(sentFirst == "Basic dTpw")
        let first = answers.responseReceived(statusCode: 200, offersStaleDigest: false)
        #expect(first.refusedCount == 0)
        #expect(first.accepted?.credential.user == "u" && first.accepted?.space == Self.space)
        // Sent again with the next exchange (the answer stands until a redirect), but stored once.
        let sentAgain = answers.exchangeStarted()
        let second = answers.responseReceived(statusCode: 200, offersStaleDigest: false)
        #expect(sentAgain == "Basic dTpw" && second.accepted == nil)
    }

    @Test func eachRefusalCountsAndARefusedAnswerIsNotStored() {
        var answers = ChallengeAnswers()
        for expected in 1...3 {
            answers.answer("Basic wrong", from: Self.answered, isDigest: false)
            _ = answers.exchangeStarted()
            let settled = answers.responseReceived(statusCode: 401, offersStaleDigest: false)
            #expect(settled.refusedCount == expected && settled.accepted == nil)
        }
        // A response to an exchange that carried no answer settles nothing.
        let unanswered = answers.responseReceived(statusCode: 401, offersStaleDigest: false)
        #expect(unanswered.refusedCount == 3)
    }

    /// A Digest answer refused only because its nonce went stale was right: not a refusal. A stale
    /// offer after a Basic answer still counts.
    @Test func aStaleDigestNonceIsNotARefusal() {
        var answers = ChallengeAnswers()
        answers.answer("Digest a", from: Self.answered, isDigest: true)
        _ = answers.exchangeStarted()
        let stale = answers.responseReceived(statusCode: 401, offersStaleDigest: true)
        _ = answers.exchangeStarted()
        let refused = answers.responseReceived(statusCode: 401, offersStaleDigest: false)
        answers.answer("Basic b", from: Self.answered, isDigest: false)
        _ = answers.exchangeStarted()
        let basicRefused = answers.responseReceived(statusCode: 401, offersStaleDigest: true)
        #expect(stale.refusedCount == 0 && refused.refusedCount == 1 && basicRefused.refusedCount == 2)
    }

    @Test func aRedirectDropsTheAnswerAndKeepsTheCount() {
        var answers = ChallengeAnswers()
        answers.answer("Basic x", from: Self.answered, isDigest: false)
        _ = answers.exchangeStarted()
        _ = answers.responseReceived(statusCode: 401, offersStaleDigest: false)
        answers.redirected()
        let sent = answers.exchangeStarted()
        #expect(answers.authorization == nil && sent == nil)
        let settled = answers.responseReceived(statusCode: 200, offersStaleDigest: false)
        #expect(settled.refusedCount == 1 && settled.accepted == nil)
    }
}
