package import Foundation

extension UUID {
    /// A version 4 UUID from the system's random source. Foundation's `UUID()` opens, reads and
    /// closes `/dev/urandom` on Linux each time: three system calls per request.
    package static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // RFC 4122 variant
        return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { bytes in
            UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }
}
