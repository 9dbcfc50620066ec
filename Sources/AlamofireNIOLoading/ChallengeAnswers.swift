import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loading task's answers to authentication challenges, as a value: the answer it sends with
/// each exchange, and how many answers the server has refused (URLSession's
/// `previousFailureCount`).
///
/// ```
/// no answer ─answer(…)─▶ answering ─exchangeStarted─▶ carried ─200 etc.─▶ answering (credential accepted, returned once)
///                                                            ├─401─▶ answering, refused + 1
///                                                            └─401, Digest nonce stale─▶ answering (not a refusal)
/// any ─redirected─▶ no answer (an answer is for the URL challenged); the refusals are kept
/// ```
struct ChallengeAnswers {
    /// The credential an answer came from and the protection space it answered.
    struct Answered {
        let credential: URLCredential
        let space: URLProtectionSpace
    }

    /// The `Authorization` value sent with every exchange until a redirect.
    private(set) var authorization: String?
    /// Answers the server refused (a 401 again); a Digest answer refused as `stale` is not one.
    private(set) var refusedCount = 0
    private var answered: Answered?
    private var isDigest = false
    /// Whether the exchange under way carries the answer.
    private var exchangeCarriesAnswer = false

    /// A credential answered a challenge: the next exchanges carry `authorization`.
    mutating func answer(_ authorization: String, from answered: Answered, isDigest: Bool) {
        self.authorization = authorization
        self.answered = answered
        self.isDigest = isDigest
    }

    /// The task follows a redirect: the answer is not sent to the new URL.
    mutating func redirected() {
        authorization = nil
    }

    /// An exchange starts; returns the `Authorization` value it sends, if any.
    mutating func exchangeStarted() -> String? {
        exchangeCarriesAnswer = authorization != nil
        return authorization
    }

    /// What a response says of the answer the exchange carried: a 401 refuses it (unless the
    /// server only found a Digest nonce stale), anything else accepts it, and the credential
    /// accepted is returned once, to be stored. Returns the refusals so far with it.
    ///
    /// - Parameter offersStaleDigest: whether the response offers a Digest challenge with `stale=true`.
    mutating func responseReceived(statusCode: Int, offersStaleDigest: Bool) -> (refusedCount: Int, accepted: Answered?) {
        defer { exchangeCarriesAnswer = false }
        guard exchangeCarriesAnswer else { return (refusedCount, nil) }
        guard statusCode == 401 else {
            defer { answered = nil }
            return (refusedCount, answered)
        }
        if !(isDigest && offersStaleDigest) { refusedCount += 1 }
        return (refusedCount, nil)
    }
}
