package import Foundation
import Synchronization

extension UUID {
    /// A version 4 UUID from the system's random source. Foundation's `UUID()` opens, reads and
    /// closes `/dev/urandom` on Linux each time: three system calls per request.
    package static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        return versionFour(high: generator.next(), low: generator.next())
    }

    /// A version 4 UUID that no other call in this process returns, made without a system call: a
    /// counter, mixed with a key read once from the system's random source. The 62 bits below the
    /// variant are a bijection of the counter (the key XORed in, then SplitMix64's finalizer modulo
    /// 2^62), so no two of the first 2^62 calls collide; the first half is the counter through the
    /// whole finalizer. Another process, with its own key, makes ids unrelated to these (a forked
    /// child shares its parent's key and count). For identifiers that must be unique within the
    /// process, not unguessable (a request's `id`).
    package static func unique() -> UUID {
        let count = uniqueCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        return versionFour(high: mix(count ^ uniqueKey.high, within: .max), low: mix(count ^ uniqueKey.low, within: (1 << 62) - 1))
    }

    private static let uniqueCounter = Atomic<UInt64>(0)
    private static let uniqueKey: (high: UInt64, low: UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    /// SplitMix64's finalizer modulo `mask + 1` (a power of two): a bijection on the bits `mask` keeps,
    /// as odd multipliers and right xorshifts are each invertible there. With every bit, the finalizer
    /// itself.
    private static func mix(_ value: UInt64, within mask: UInt64) -> UInt64 {
        var z = value & mask
        z = ((z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9) & mask
        z = ((z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB) & mask
        return z ^ (z >> 31)
    }

    private static func versionFour(high: UInt64, low: UInt64) -> UUID {
        let high = (high & ~0xF000) | 0x4000  // version 4
        let low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // RFC 4122 variant
        return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { bytes in
            UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }
}
