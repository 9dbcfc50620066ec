import CZlib
package import NIOCore

/// The permessage-deflate extension's parameters (RFC 7692): what the client offers, and what the
/// server's `Sec-WebSocket-Extensions` answer sets.
package struct PerMessageDeflateParameters: Equatable, Sendable {
    /// The server compresses each message on its own (the client's inflater starts afresh).
    var serverNoContextTakeover = false
    /// The client must compress each message on its own.
    var clientNoContextTakeover = false
    /// The server's LZ77 window, in bits (the client's inflater takes the largest, 15).
    var serverMaxWindowBits = 15
    /// The client's LZ77 window, in bits.
    var clientMaxWindowBits = 15

    /// The parameters of an answer that sets none: context takeover both ways, 15-bit windows.
    package init() {}

    /// The client's offer: permessage-deflate, letting the server bound the client's window.
    static let offer = "permessage-deflate; client_max_window_bits"

    /// What the server's `Sec-WebSocket-Extensions` fields accept: nil for no extension, or why the
    /// answer cannot be accepted (an extension or a parameter not offered, a value out of range).
    package static func negotiated(by fields: [String]) -> Result<Self?, NegotiationFailure> {
        let extensions = fields.flatMap { $0.split(separator: ",") }.map { $0.trimmingASCIIWhitespace }.filter { !$0.isEmpty }
        guard let accepted = extensions.first else { return .success(nil) }
        guard extensions.count == 1 else { return .failure(.init("the server chose more than one WebSocket extension")) }
        let elements = accepted.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingASCIIWhitespace }
        guard elements.first?.lowercased() == "permessage-deflate" else {
            return .failure(.init("the server chose the WebSocket extension \(accepted), which was not offered"))
        }
        var parameters = Self()
        var seen = Set<String>()
        for element in elements.dropFirst() {
            let pair = element.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingASCIIWhitespace }
            guard let name = pair.first?.lowercased(), !name.isEmpty else {
                return .failure(.init("the server's permessage-deflate answer has an empty parameter"))
            }
            let value = pair.count == 2 ? String(pair[1].filter { $0 != "\"" }) : nil
            guard seen.insert(name).inserted else { return .failure(.init("the server repeated the permessage-deflate parameter \(name)")) }
            switch (name, value) {
            case ("server_no_context_takeover", nil): parameters.serverNoContextTakeover = true
            case ("client_no_context_takeover", nil): parameters.clientNoContextTakeover = true
            case ("server_max_window_bits", let value?):
                // zlib's deflate cannot keep an 8-bit window, but the inflater can read one.
                guard let bits = Int(value), (8...15).contains(bits) else { return .failure(.init("server_max_window_bits=\(value)")) }
                parameters.serverMaxWindowBits = bits
            case ("client_max_window_bits", let value?):
                guard let bits = Int(value), (9...15).contains(bits) else { return .failure(.init("client_max_window_bits=\(value)")) }
                parameters.clientMaxWindowBits = bits
            default:
                return .failure(.init("the permessage-deflate parameter \(element) is not valid in an answer"))
            }
        }
        return .success(parameters)
    }

    package struct NegotiationFailure: Error, Equatable {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// The two zlib streams of a connection with permessage-deflate: the client's messages compressed,
/// the server's inflated. Touched on the connection's event loop only.
package final class PerMessageDeflate {
    /// What inflating a message can end with.
    package enum InflateFailure: Error {
        /// Larger than the limit once inflated.
        case overLimit
        /// Not valid deflate data.
        case invalid
    }

    let parameters: PerMessageDeflateParameters
    private let deflater: UnsafeMutablePointer<z_stream>
    private let inflater: UnsafeMutablePointer<z_stream>
    /// What a sync flush ends with, dropped from each message and added back before inflating.
    private static let flushMarker: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// The codec for `parameters`, or nil when zlib cannot set up its streams.
    package static func make(_ parameters: PerMessageDeflateParameters) -> PerMessageDeflate? {
        let size = Int32(MemoryLayout<z_stream>.size)
        let deflater = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        deflater.initialize(to: z_stream())
        let windowBits = -Int32(parameters.clientMaxWindowBits)
        guard deflateInit2_(deflater, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, size) == Z_OK
        else {
            deflater.deallocate()
            return nil
        }
        let inflater = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        inflater.initialize(to: z_stream())
        // The largest window reads any smaller one the server compressed with (zlib widens 8 to 9).
        guard inflateInit2_(inflater, -MAX_WBITS, ZLIB_VERSION, size) == Z_OK else {
            deflateEnd(deflater)
            deflater.deallocate()
            inflater.deallocate()
            return nil
        }
        return PerMessageDeflate(parameters: parameters, deflater: deflater, inflater: inflater)
    }

    private init(
        parameters: PerMessageDeflateParameters, deflater: UnsafeMutablePointer<z_stream>, inflater: UnsafeMutablePointer<z_stream>
    ) {
        self.parameters = parameters
        self.deflater = deflater
        self.inflater = inflater
    }

    deinit {
        deflateEnd(deflater)
        inflateEnd(inflater)
        deflater.deallocate()
        inflater.deallocate()
    }

    /// The message's payload compressed (a sync flush, its last four bytes dropped).
    func compress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var output = allocator.buffer(capacity: Int(deflateBound(deflater, uLong(payload.readableBytes))) + 16)
        payload.withUnsafeReadableBytes { bytes in
            // zlib never writes to its input.
            deflater.pointee.next_in = bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
            deflater.pointee.avail_in = uInt(clamping: bytes.count)
            repeat {
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: 64) { space in
                    deflater.pointee.next_out = space.bindMemory(to: Bytef.self).baseAddress
                    deflater.pointee.avail_out = uInt(clamping: space.count)
                    _ = deflate(deflater, Z_SYNC_FLUSH)
                    return space.count - Int(deflater.pointee.avail_out)
                }
            } while deflater.pointee.avail_out == 0
        }
        if parameters.clientNoContextTakeover { deflateReset(deflater) }
        // A sync flush ends with the marker, unless it had nothing to flush (an empty message right
        // after another): then the message is the one byte RFC 7692 §7.2.3.6 gives it.
        guard output.readableBytes >= Self.flushMarker.count else { return allocator.buffer(bytes: [0x00]) }
        output.moveWriterIndex(to: output.writerIndex - Self.flushMarker.count)
        return output
    }

    /// The message's payload inflated, at most `limit` bytes.
    package func decompress(_ payload: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) throws(InflateFailure) -> ByteBuffer {
        // Nothing at all is taken for an empty message (there is no block for the marker to end).
        guard payload.readableBytes > 0 else { return allocator.buffer(capacity: 0) }
        var input = payload
        input.writeBytes(Self.flushMarker)
        var output = allocator.buffer(capacity: min(limit, max(256, payload.readableBytes * 4)))
        var failure: InflateFailure?
        input.withUnsafeReadableBytes { bytes in
            inflater.pointee.next_in = bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
            inflater.pointee.avail_in = uInt(clamping: bytes.count)
            var outputFull = false
            repeat {
                var status: Int32 = Z_OK
                // Never more than one byte past the limit, whatever room the buffer has.
                let allowed = limit + 1 - output.readableBytes
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: min(16 * 1024, allowed)) { space in
                    let room = min(space.count, allowed)
                    inflater.pointee.next_out = space.bindMemory(to: Bytef.self).baseAddress
                    inflater.pointee.avail_out = uInt(clamping: room)
                    status = inflate(inflater, Z_SYNC_FLUSH)
                    return room - Int(inflater.pointee.avail_out)
                }
                outputFull = inflater.pointee.avail_out == 0 && output.readableBytes <= limit
                switch status {
                case _ where output.readableBytes > limit:
                    failure = .overLimit
                case Z_STREAM_END:
                    // A message may end with a final block (RFC 7692 §7.2.3.3): what follows starts
                    // afresh, unless it is only the marker added here.
                    inflateReset(inflater)
                    if inflater.pointee.avail_in <= UInt32(Self.flushMarker.count) { return }
                case Z_OK:
                    break
                case Z_BUF_ERROR:
                    // No progress possible: the input is used up.
                    return
                default:
                    failure = .invalid
                }
            } while failure == nil && (inflater.pointee.avail_in > 0 || outputFull)
        }
        if let failure {
            inflateReset(inflater)
            throw failure
        }
        if parameters.serverNoContextTakeover { inflateReset(inflater) }
        return output
    }
}

extension Substring {
    fileprivate var trimmingASCIIWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
