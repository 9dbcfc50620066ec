import CHTTPBinBrotli
import CHTTPBinZstd
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Brotli (RFC 7932) and Zstandard (RFC 8878) encoding with the system's libraries, for the coded
/// endpoints and for tests that need coded bytes of their own.
public enum ContentEncoder {
    /// Encoding failed (the libraries fail only when out of memory).
    public struct Failure: Error {}

    /// `bytes` in one Brotli stream, at `quality` (0 to 11).
    public static func brotli(_ bytes: [UInt8], quality: Int32 = 5) throws -> [UInt8] {
        var size = BrotliEncoderMaxCompressedSize(bytes.count)
        if size == 0 { size = bytes.count + 1024 }
        var output = [UInt8](repeating: 0, count: size)
        let succeeded = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                BrotliEncoderCompress(
                    quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, input.count, input.baseAddress, &size, out.baseAddress)
            }
        }
        guard succeeded != 0 else { throw Failure() }
        return Array(output.prefix(size))
    }

    /// `bytes` in one Zstandard frame, at `level` (1 to 19).
    public static func zstd(_ bytes: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let size = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                ZSTD_compress(out.baseAddress, out.count, input.baseAddress, input.count, level)
            }
        }
        guard ZSTD_isError(size) == 0 else { throw Failure() }
        return Array(output.prefix(size))
    }

    /// `bytes` in the coding a `Content-Encoding` names: `br` or `zstd`.
    static func encode(_ bytes: [UInt8], as coding: String) throws -> [UInt8] {
        switch coding {
        case "br": try brotli(bytes)
        case "zstd": try zstd(bytes)
        default: throw HTTPBinError(.notFound)
        }
    }
}

extension Content {
    /// `/brotli` and `/zstd`: `{"brotli"|"zstd": true, "headers", "method", "origin"}`, coded.
    static func coded(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        guard ex.segments.count == 1 else { throw HTTPBinError(.notFound) }
        let name = ex.segments[0]
        let object: [String: Any] = [name: true, "headers": ex.echoedHeaders, "method": ex.method.rawValue, "origin": ex.origin]
        let json = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let coding = name == "brotli" ? "br" : "zstd"
        return ex.bytes(
            try ContentEncoder.encode(Array(json), as: coding), contentType: "application/json", headers: [.contentEncoding: coding])
    }

    /// `/brotli-bomb` and `/zstd-bomb`: 64 MiB of zeros, coded to a few kilobytes, for testing that
    /// clients limit decoding.
    static func codedBomb(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        let isBrotli = ex.segments.first == "brotli-bomb"
        let body = try (isBrotli ? brotliBomb : zstdBomb).get()
        return ex.bytes(body, contentType: "application/octet-stream", headers: [.contentEncoding: isBrotli ? "br" : "zstd"])
    }

    private static let brotliBomb = Result { try ContentEncoder.brotli([UInt8](repeating: 0, count: 64 * 1024 * 1024)) }
    private static let zstdBomb = Result { try ContentEncoder.zstd([UInt8](repeating: 0, count: 64 * 1024 * 1024)) }

    /// `/coded/:coding/:n?seed=`: the `n` bytes `/bytes/:n?seed=` sends, coded as `br` or `zstd`
    /// (random bytes do not shrink: the coded body is a little larger), with a Content-Length.
    static func codedBytes(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        guard rest.count == 2, ["br", "zstd"].contains(rest[0]), let length = Int(rest[1]), (0...(64 << 20)).contains(length) else {
            throw HTTPBinError(.notFound)
        }
        guard let seed = UInt64(ex.queryValue("seed") ?? "0") else { throw HTTPBinError(.badRequest, "seed must be an unsigned integer") }
        var generator = SeededBytes(seed: seed)
        var plain = ByteBuffer()
        generator.write(length, into: &plain)
        let coded = try ContentEncoder.encode(Array(plain.readableBytesView), as: rest[0])
        return ex.bytes(coded, contentType: "application/octet-stream", headers: [.contentEncoding: rest[0]])
    }
}
