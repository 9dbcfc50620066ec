import AlamofireNIO
import Foundation
import HTTPBinServer
import NIOSSL

/// The certificates of nginx's HTTPS server (W9, W2T): a test CA and a leaf for 127.0.0.1 and
/// localhost, made once per process by HTTPBinServer's generator. AlamofireNIO and AsyncHTTPClient
/// trust the CA. URLSession sits these workloads out: on Linux it offers no way to trust a private
/// CA (no trust challenge reaches its delegate, and libcurl's CA file is fixed), and the benchmark
/// does not touch the system's trust store.
enum BenchTLS {
    static let certificates: TestCertificates = {
        do {
            return try TestCertificates.generate()
        } catch {
            fatalError("cannot generate the benchmark's test certificates: \(error)")
        }
    }()

    /// Names the file a child process reads the CA from: its parent's, which signed nginx's leaf
    /// (a child's own generated CA would not).
    static let authorityFileVariable = "ALAMOFIRE_NIO_BENCH_CA"

    static let authorityDER: [UInt8] = {
        if let path = ProcessInfo.processInfo.environment[authorityFileVariable] {
            guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read the benchmark's CA at \(path)") }
            return Array(data)
        }
        return certificates.certificateAuthority.certificateDER
    }()

    /// The CA as AlamofireNIO's `Session(additionalTrustRoots:)` takes it.
    static let authority: SecCertificate = {
        do {
            return try SecCertificate(derEncoded: Data(authorityDER))
        } catch {
            fatalError("the benchmark's test CA does not load: \(error)")
        }
    }()

    /// The CA as AsyncHTTPClient's `TLSConfiguration.trustRoots` takes it.
    static let authorityForNIOSSL: NIOSSLCertificate = {
        do {
            return try NIOSSLCertificate(bytes: authorityDER, format: .der)
        } catch {
            fatalError("the benchmark's test CA does not load: \(error)")
        }
    }()
    static var leaf: CertificateIdentity { certificates.leaf(for: .valid) }

    /// Writes the leaf's certificate and key for nginx, and the CA for child processes; returns the
    /// leaf's paths.
    static func writeFiles(in directory: URL) throws -> (certificate: String, key: String) {
        let certificate = directory.appendingPathComponent("leaf.pem")
        let key = directory.appendingPathComponent("leaf.key")
        try Data(leaf.certificatePEM.utf8).write(to: certificate)
        try Data(leaf.privateKeyPEM.utf8).write(to: key)
        try Data(authorityDER).write(to: authorityFile(in: directory))
        return (certificate.path, key.path)
    }

    /// Where ``writeFiles(in:)`` puts the CA.
    static func authorityFile(in directory: URL) -> URL {
        directory.appendingPathComponent("authority.der")
    }
}

/// How a workload reaches nginx.
enum BenchProtocol: Sendable, Equatable {
    /// Plain HTTP/1.1.
    case plain
    /// HTTPS, HTTP/2 where the client negotiates it (AlamofireNIO and AsyncHTTPClient do by default).
    case http2
    /// HTTPS with HTTP/1.1 forced, to compare with `http2`.
    case tlsHTTP1
}
