import CHTTPBinZlib

/// One-shot compression with the system zlib, for `/gzip`, `/deflate` and PNG image data, and
/// decompression of request bodies sent with `Content-Encoding: deflate`.
enum Zlib {
    enum Format {
        /// RFC 1952: what `Content-Encoding: gzip` means.
        case gzip
        /// RFC 1950 (zlib-wrapped deflate): what `Content-Encoding: deflate` means.
        case zlib

        fileprivate var windowBits: Int32 { self == .gzip ? 15 + 16 : 15 }
    }

    struct Failure: Error { let code: Int32 }

    /// The decompressed data would exceed the limit the caller gave.
    struct OverLimit: Error { let limit: Int }

    static func compress(_ input: [UInt8], format: Format, level: Int32 = Z_DEFAULT_COMPRESSION) throws -> [UInt8] {
        var stream = z_stream()
        var status = deflateInit2_(
            &stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure(code: status) }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        status = input.withUnsafeBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(code: status) }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// Decompresses one whole stream of `format`; fails when `input` is not exactly one complete stream
    /// (truncated, corrupt, or followed by more bytes) or when the output would exceed `limit` bytes.
    static func decompress(_ input: [UInt8], format: Format, limit: Int) throws -> [UInt8] {
        var stream = z_stream()
        var status = inflateInit2_(&stream, format.windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure(code: status) }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        try input.withUnsafeBufferPointer { inBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.avail_in = uInt(inBuffer.count)
            repeat {
                status = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                // A truncated stream ends in Z_BUF_ERROR: no input left and no progress possible.
                guard status == Z_OK || status == Z_STREAM_END else { throw Failure(code: status) }
                let produced = chunk.count - Int(stream.avail_out)
                guard output.count + produced <= limit else { throw OverLimit(limit: limit) }
                output.append(contentsOf: chunk[..<produced])
            } while status != Z_STREAM_END
        }
        guard stream.avail_in == 0 else { throw Failure(code: Z_DATA_ERROR) }
        return output
    }

    /// CRC-32 as PNG chunks and gzip trailers use it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CHTTPBinZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }
}
