import AlamofireNIOLoading
import Foundation
import NIOPosix

/// Connects the session's ``ServerTrustManager`` to the trust hook: for each TLS connection, before
/// any byte of a request is sent, the manager picks the host's evaluator and the evaluator judges a
/// ``SecTrust`` made of the server's chain. A host without an evaluator gets the default evaluation,
/// as URLSession's default handling does.
enum ServerTrustBridge {
    /// Evaluators may block (Security's API is synchronous, and `SecTrust` waits for swift-certificates'
    /// async verifier, which runs on `TrustCheckExecutor`); they run on threads of their own, never on
    /// an event loop, in the concurrency pool or on Dispatch's workers, which other work needs.
    private static let evaluationPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))
        pool.start()
        return pool
    }()

    /// The trust judge for `manager`.
    static func judge(for manager: ServerTrustManager) -> @Sendable (ServerTrustQuestion) async throws -> Void {
        { question in
            let decided = try await evaluationPool.runIfActive { evaluate(question, with: manager) }
            // False: no evaluator for the host, so the default evaluation applies.
            if try !decided.get() { try await question.evaluateDefault() }
        }
    }

    /// Runs the host's evaluator: true when one ran and accepted, false when there is none.
    private static func evaluate(_ challenge: ServerTrustQuestion, with manager: ServerTrustManager) -> Result<Bool, AFError> {
        Result {
            guard let evaluator = try manager.serverTrustEvaluator(forHost: challenge.host) else { return false }
            guard !challenge.certificateChain.isEmpty else {
                throw AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound)
            }
            let chain: [SecCertificate]
            do {
                chain = try challenge.certificateChain.map { try SecCertificate(derEncoded: Data($0)) }
            } catch {
                throw AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: error))
            }
            let trust = SecTrust(chain: chain, defaultRoots: challenge.defaultRoots, policies: [SecPolicy.af.default])
            try evaluator.evaluate(trust, forHost: challenge.host)
            return true
        }
        .mapError { $0.asAFError(or: .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: $0))) }
    }
}

extension URLError {
    /// The error a server trust evaluator refused the server with, which Alamofire makes the
    /// request's error (rather than wrapping it in `.sessionTaskFailed`).
    var serverTrustFailure: AFError? {
        guard let error = trustJudgeError as? AFError, error.isServerTrustEvaluationError else { return nil }
        return error
    }
}
