import NIOCore

#if Brotli
import CBrotli
#endif
#if Zstd
import CZstd
#endif

// The two streaming decoders behind `ContentCoding`, each owning its library's state. A call feeds
// one piece of the coded body and emits output in chunks of at most `chunkSize` bytes, so a body
// that decodes to much more than it weighs never sits in memory whole.

#if Brotli
/// Decodes a Brotli stream (RFC 7932) with libbrotlidec.
final class BrotliStreamDecoder: ContentStreamDecoder {
    private let state: OpaquePointer
    private(set) var isFinished = false

    init() throws {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { throw ContentDecodingError.outOfMemory }
        self.state = state
    }

    deinit {
        BrotliDecoderDestroyInstance(state)
    }

    func decode(_ input: inout ByteBuffer, allocator: ByteBufferAllocator, emit: (ByteBuffer) throws -> Void) throws {
        while input.readableBytes > 0 || BrotliDecoderHasMoreOutput(state) != 0 {
            guard !isFinished else { throw ContentDecodingError.trailingData }
            var output = allocator.buffer(capacity: Self.chunkSize)
            var result = BROTLI_DECODER_RESULT_ERROR
            input.readWithUnsafeReadableBytes { inputBytes in
                var availableIn = inputBytes.count
                var nextIn = inputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { outputBytes in
                    var availableOut = Self.chunkSize
                    var nextOut = outputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return Self.chunkSize - availableOut
                }
                return inputBytes.count - availableIn
            }
            switch result {
            case BROTLI_DECODER_RESULT_SUCCESS: isFinished = true
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT, BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: break
            default: throw ContentDecodingError.malformed
            }
            if output.readableBytes > 0 { try emit(output) }
            // Everything read and nothing held back: wait for the next piece.
            if result == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && input.readableBytes == 0 { return }
        }
    }
}
#endif

#if Zstd
/// Decodes Zstandard frames (RFC 8878; several in a row are one body) with libzstd, refusing a
/// frame whose window is over 8 MiB (RFC 9659) before allocating it.
final class ZstdStreamDecoder: ContentStreamDecoder {
    /// 2^23 bytes: the largest window an HTTP client must accept (RFC 9659 §3).
    static let windowLogMax: Int32 = 23

    private let context: OpaquePointer
    /// Whether the last call ended on a frame's end with all its output flushed (an empty body,
    /// never fed, is the handler's to tell apart).
    private(set) var isFinished = false

    init() throws {
        guard let context = ZSTD_createDCtx() else { throw ContentDecodingError.outOfMemory }
        self.context = context
        guard ZSTD_isError(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.windowLogMax)) == 0 else {
            ZSTD_freeDCtx(context)
            throw ContentDecodingError.outOfMemory
        }
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    func decode(_ input: inout ByteBuffer, allocator: ByteBufferAllocator, emit: (ByteBuffer) throws -> Void) throws {
        var outputFilledLastTime = true
        // Until the input is used up and the decoder had room to spare (nothing is left in it).
        while input.readableBytes > 0 || (outputFilledLastTime && !isFinished) {
            var output = allocator.buffer(capacity: Self.chunkSize)
            var hint = 0
            input.readWithUnsafeReadableBytes { inputBytes in
                var source = ZSTD_inBuffer(src: inputBytes.baseAddress, size: inputBytes.count, pos: 0)
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { outputBytes in
                    var destination = ZSTD_outBuffer(dst: outputBytes.baseAddress, size: Self.chunkSize, pos: 0)
                    hint = ZSTD_decompressStream(context, &destination, &source)
                    return destination.pos
                }
                return source.pos
            }
            guard ZSTD_isError(hint) == 0 else { throw ContentDecodingError.malformed }
            isFinished = hint == 0
            outputFilledLastTime = output.readableBytes == Self.chunkSize
            if output.readableBytes > 0 { try emit(output) }
            if !outputFilledLastTime && input.readableBytes == 0 { return }
        }
    }
}
#endif
