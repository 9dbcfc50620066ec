import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization
import X509

/// A server's certificate chain with the policies to evaluate it by: Linux's stand-in for Security's
/// `SecTrust`, handed to every ``ServerTrustEvaluating`` evaluator.
///
/// As with `SecTrust`, evaluating is synchronous and may block (a revocation check asks an OCSP
/// responder over the network): AlamofireNIO calls evaluators on a thread pool of their own, never
/// on an event loop, a Dispatch worker or in the Swift concurrency pool. The `.af` methods are Alamofire's.
public final class SecTrust: Sendable, CustomStringConvertible {
    /// The certificates the server presented, its own first.
    let chain: [SecCertificate]
    /// The roots trusted unless anchors are set: the system's plus the session's additional ones.
    let defaultRoots: TrustRoots
    private let settings: Mutex<Settings>

    private struct Settings {
        var policies: [SecPolicy]
        /// Roots set by `setAnchorCertificates`, which then are the only ones trusted.
        var anchors: [SecCertificate]?
        /// The path the last successful evaluation built, from the server's certificate to a root.
        var evaluatedChain: [SecCertificate]?
    }

    /// A trust for a chain, evaluated against `anchors` (the system's roots by default), as
    /// `SecTrustCreateWithCertificates` makes one.
    /// - Parameters:
    ///   - certificates: the chain, the server's own certificate first.
    ///   - policies: what to check; `SecPolicy.af.default` by default.
    public convenience init(certificates: [SecCertificate], policies: [SecPolicy] = [SecPolicy.af.default]) {
        self.init(chain: certificates, defaultRoots: TrustRoots([], includingSystemRoots: true), policies: policies)
    }

    init(chain: [SecCertificate], defaultRoots: TrustRoots, policies: [SecPolicy]) {
        self.chain = chain
        self.defaultRoots = defaultRoots
        self.settings = Mutex(Settings(policies: policies, anchors: nil, evaluatedChain: nil))
    }

    /// The policies the next evaluation applies.
    var policies: [SecPolicy] {
        get { settings.withLock { $0.policies } }
        set { settings.withLock { $0.policies = newValue } }
    }

    /// Trusts only `certificates` as roots from now on, as `SecTrustSetAnchorCertificates` followed
    /// by `SecTrustSetAnchorCertificatesOnly(true)` does.
    func setAnchors(_ certificates: [SecCertificate]) {
        settings.withLock { $0.anchors = certificates }
    }

    /// The certificates, as `SecTrustCopyCertificateChain` returns them: once an evaluation has
    /// succeeded, the path it built up to the root; before, the server's chain.
    var certificates: [SecCertificate] { settings.withLock { $0.evaluatedChain } ?? chain }

    /// The server's certificate chain, as text.
    public var description: String { "SecTrust(\(chain.map(\.description).joined(separator: " <- ")))" }

    /// Evaluates the chain by the current policies.
    /// - Throws: a `URLError` naming what failed (`.serverCertificateHasBadDate`,
    ///   `.serverCertificateNotYetValid`, `.serverCertificateHasUnknownRoot`, or
    ///   `.serverCertificateUntrusted` for the name), or a ``RevocationCheckError``.
    func evaluatePolicies() throws {
        let (policies, anchors) = settings.withLock { ($0.policies, $0.anchors) }
        let roots = anchors.map { TrustRoots($0.map(\.certificate), trustingAnchoredLeaves: true) } ?? defaultRoots
        let parsed = chain.map(\.certificate)
        var hostname: String?
        var revocation: RevocationTrustEvaluator.Options?
        for policy in policies {
            switch policy.kind {
            case .ssl(let name): hostname = hostname ?? name
            case .revocation(let options): revocation = options
            }
        }
        let path = try BlockingEvaluation.run { [hostname, revocation] in
            // An empty chain fails as untrusted.
            let path = try await roots.evaluate(chain: parsed, host: hostname, now: Date())
            if let revocation { try await RevocationCheck(options: revocation).check(chain: parsed, roots: roots.store) }
            return path
        }
        // The server's own certificates keep their objects; the root found is wrapped.
        let evaluated = try? path.map { certificate in
            try chain.first { $0.certificate == certificate } ?? SecCertificate(certificate: certificate)
        }
        settings.withLock { $0.evaluatedChain = evaluated }
    }

    /// Evaluates by `policy` alone, wrapping a failure with `reason`.
    func evaluate(
        _ policy: SecPolicy, failure reason: (AFError.ServerTrustFailureReason.Output) -> AFError.ServerTrustFailureReason, host: String
    )
        throws
    {
        self.policies = [policy]
        do {
            try evaluatePolicies()
        } catch {
            throw AFError.serverTrustEvaluationFailed(reason: reason(.init(host, self, error)))
        }
    }
}

/// Runs async checks (swift-certificates' verifier is async) for the synchronous evaluation API,
/// blocking the calling thread until they end.
///
/// The checks run on ``TrustCheckExecutor``, not in the Swift concurrency pool: an evaluator may be
/// called from the pool itself (a test, or a user's task calling `trust.af.evaluate()`), and the pool
/// has one thread per core. Had the checks needed a pool thread, as many blocked callers as cores
/// would leave none to run them, stalling every task in the process until Dispatch added a thread.
enum BlockingEvaluation {
    static func run<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        // Blocking one of the checks' own queues could leave a job of `body` behind it forever.
        precondition(!TrustCheckExecutor.isCurrent, "a trust evaluation cannot run inside another's checks")
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        Task.detached(executorPreference: TrustCheckExecutor.shared) {
            let result: Result<Value, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}

/// The executor the trust checks' tasks prefer: serial Dispatch queues, one per core, taking jobs in
/// turn. A serial queue gets a thread of its own when it has work, whatever else is busy (a
/// concurrent queue shares the workers of Dispatch's global queues, which Linux's concurrency pool
/// also uses, and waits about a second for another when they are blocked), so a check always runs
/// while its callers block.
final class TrustCheckExecutor: TaskExecutor {
    static let shared = TrustCheckExecutor()

    private static let marker = DispatchSpecificKey<Bool>()
    private let queues: [DispatchQueue]
    private let next = Atomic<UInt>(0)

    private init() {
        queues = (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { index in
            let queue = DispatchQueue(label: "org.alamofire.nio.trust-checks.\(index)")
            queue.setSpecific(key: Self.marker, value: true)
            return queue
        }
    }

    /// Whether the calling code runs on one of this executor's queues.
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) ?? false }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let turn = Int(next.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(queues.count))
        queues[turn].async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension SecTrust: AlamofireExtended {}
extension AlamofireExtension where ExtendedType == SecTrust {
    /// Evaluates `self` after applying the `SecPolicy` value provided.
    /// - Parameter policy: the policy to apply (it replaces the current ones).
    /// - Throws: `AFError.serverTrustEvaluationFailed` with `.trustEvaluationFailed`.
    public func evaluate(afterApplying policy: SecPolicy) throws {
        try apply(policy: policy).af.evaluate()
    }

    /// Applies a `SecPolicy` to `self`, replacing the current ones.
    /// - Parameter policy: the policy.
    /// - Returns: `self`, with the policy applied.
    /// - Throws: never on Linux; kept for Alamofire's signature.
    @discardableResult
    public func apply(policy: SecPolicy) throws -> SecTrust {
        type.policies = [policy]
        return type
    }

    /// Evaluates `self` by its policies.
    /// - Throws: `AFError.serverTrustEvaluationFailed` with `.trustEvaluationFailed` and the reason.
    public func evaluate() throws {
        do {
            try type.evaluatePolicies()
        } catch {
            throw AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: error))
        }
    }

    /// Makes `certificates` the only roots `self` trusts, so a self-signed certificate among them
    /// validates.
    /// - Parameter certificates: the roots.
    /// - Throws: never on Linux; kept for Alamofire's signature.
    public func setAnchorCertificates(_ certificates: [SecCertificate]) throws {
        type.setAnchors(certificates)
    }

    /// The public keys of the certificates in `self`.
    public var publicKeys: [SecKey] { certificates.af.publicKeys }

    /// The certificates in `self`, the server's own first: after a successful evaluation, the path
    /// it built up to the root (so a pinned CA is found), as Security reports it.
    public var certificates: [SecCertificate] { type.certificates }

    /// The DER encodings of the certificates in `self`.
    public var certificateData: [Data] { certificates.af.data }

    /// Validates the chain (`SecPolicy.af.default`), not the host name.
    /// - Parameter host: the host, for the error.
    /// - Throws: `AFError.serverTrustEvaluationFailed` with `.defaultEvaluationFailed`.
    public func performDefaultValidation(forHost host: String) throws {
        try type.evaluate(SecPolicy.af.default, failure: { .defaultEvaluationFailed(output: $0) }, host: host)
    }

    /// Validates the chain and that its leaf names `host` (`SecPolicy.af.hostname(host)`).
    ///
    /// A chain that fails on its own, whatever the name, fails with `.defaultEvaluationFailed`, so
    /// the reason says which check failed (Alamofire on current Apple systems reports both as
    /// `.trustEvaluationFailed`).
    /// - Parameter host: the host name to match.
    /// - Throws: `AFError.serverTrustEvaluationFailed` with `.hostValidationFailed` or `.defaultEvaluationFailed`.
    public func performValidation(forHost host: String) throws {
        // One pass: only the name check reports `.serverCertificateUntrusted`; the chain's checks have codes of their own.
        let reason: (AFError.ServerTrustFailureReason.Output) -> AFError.ServerTrustFailureReason = { output in
            (output.error as? URLError)?.code == .serverCertificateUntrusted
                ? .hostValidationFailed(output: output) : .defaultEvaluationFailed(output: output)
        }
        try type.evaluate(SecPolicy.af.hostname(host), failure: reason, host: host)
    }
}

extension Array: AlamofireExtended {}
extension AlamofireExtension where ExtendedType == [SecCertificate] {
    /// All `Data` values for the contained `SecCertificate`s.
    public var data: [Data] { type.map(\.data) }

    /// All public `SecKey` values for the contained `SecCertificate`s.
    public var publicKeys: [SecKey] { type.map(\.publicKey) }
}

extension SecCertificate: AlamofireExtended {}
extension AlamofireExtension where ExtendedType == SecCertificate {
    /// The certificate's public key.
    public var publicKey: SecKey? { type.publicKey }
}
