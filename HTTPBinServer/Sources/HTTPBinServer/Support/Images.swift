/// Small valid images made in code, for `/image/png` and `/image/jpeg`.
enum Images {
    /// A 16×16 RGB PNG: a diagonal gradient.
    static func png() throws -> [UInt8] {
        let size = 16
        var raw: [UInt8] = []
        for y in 0..<size {
            raw.append(0)  // filter type: none
            for x in 0..<size {
                raw += [UInt8(x * 16), UInt8(y * 16), UInt8((x + y) * 8)]
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        // width, height, bit depth 8, colour type 2 (RGB), compression, filter, interlace
        png += chunk("IHDR", bigEndian(UInt32(size)) + bigEndian(UInt32(size)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", try Zlib.compress(raw, format: .zlib))
        png += chunk("IEND", [])
        return png
    }

    /// An 8×8 mid-grey baseline JPEG. With every DCT coefficient zero, the scan is one DC symbol
    /// (category 0) and one end-of-block, so one-code Huffman tables suffice.
    static func jpeg() -> [UInt8] {
        var jpeg: [UInt8] = [0xFF, 0xD8]  // SOI
        jpeg += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        jpeg += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)  // DQT: table 0, all ones
        jpeg += [0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00]  // SOF0: 8×8, 1 component
        // DHT: DC table 0 and AC table 0, each with one 1-bit code for symbol 0.
        let oneCode: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 15) + [0x00]
        jpeg += [0xFF, 0xC4, 0x00, 0x14, 0x00] + oneCode
        jpeg += [0xFF, 0xC4, 0x00, 0x14, 0x10] + oneCode
        jpeg += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]  // SOS
        jpeg += [0b0011_1111]  // DC "0", EOB "0", then padding ones
        jpeg += [0xFF, 0xD9]  // EOI
        return jpeg
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typeAndData + bigEndian(Zlib.crc32(typeAndData))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
