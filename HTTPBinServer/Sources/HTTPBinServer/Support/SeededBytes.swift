public import NIOCore

/// A fast deterministic byte stream (SplitMix64), so `/bytes/:n?seed=s` gives the same bytes every
/// time and a client can check what it received without the server keeping anything.
public struct SeededBytes: Sendable {
    private var state: UInt64
    private var pending: UInt64 = 0
    private var pendingCount = 0

    /// - Parameter seed: the stream's seed; the same seed always gives the same bytes.
    public init(seed: UInt64) { self.state = seed }

    private mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next `count` bytes of the stream.
    public mutating func next(_ count: Int) -> [UInt8] {
        var buffer = ByteBuffer()
        write(count, into: &buffer)
        return Array(buffer: buffer)
    }

    /// Appends the next `count` bytes of the stream to `buffer`.
    public mutating func write(_ count: Int, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            var index = 0
            // Leftover bytes of the last word first, so chunk boundaries never change the stream.
            while index < count && pendingCount > 0 {
                raw[index] = UInt8(truncatingIfNeeded: pending)
                pending >>= 8
                pendingCount -= 1
                index += 1
            }
            while count - index >= 8 {
                raw.storeBytes(of: nextWord().littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            if index < count {
                pending = nextWord()
                pendingCount = 8
                while index < count {
                    raw[index] = UInt8(truncatingIfNeeded: pending)
                    pending >>= 8
                    pendingCount -= 1
                    index += 1
                }
            }
            return count
        }
    }
}
