import Foundation
import NIOCore
import Testing

@testable import AlamofireNIOLoading

/// When a buffer's bytes become `Data` by sharing its memory and when by a copy.
@Suite struct ReadableDataTests {
    static func buffer(count: Int, capacity: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: capacity)
        buffer.writeBytes((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        return buffer
    }

    static func sharesMemory(_ data: Data, with buffer: ByteBuffer) -> Bool {
        let dataBase = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let bufferBase = buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        return dataBase == bufferBase
    }

    /// A large chunk filling its storage is shared, and stays readable once the buffer is gone.
    @Test func aLargeDenseChunkIsSharedAndOutlivesItsBuffer() {
        let count = ByteBuffer.smallestSharedData
        var buffer: ByteBuffer? = Self.buffer(count: count, capacity: count)
        let data = buffer!.readableData
        let expected = Data(buffer!.readableBytesView)
        #expect(Self.sharesMemory(data, with: buffer!))
        buffer = nil
        #expect(data == expected)
    }

    /// A chunk under the size, or under half of a large storage, is copied.
    @Test func smallOrSparseChunksAreCopied() {
        let small = Self.buffer(count: ByteBuffer.smallestSharedData - 1, capacity: ByteBuffer.smallestSharedData - 1)
        let sparse = Self.buffer(count: ByteBuffer.smallestSharedData, capacity: 4 * ByteBuffer.smallestSharedData)
        for buffer in [small, sparse] {
            let data = buffer.readableData
            #expect(!Self.sharesMemory(data, with: buffer))
            #expect(data == Data(buffer.readableBytesView))
        }
        #expect(ByteBuffer().readableData.isEmpty)
    }

    /// A shared `Data` changed in place writes only its own bytes: a second slice of the same storage
    /// keeps what it read.
    @Test func changingASharedDataLeavesOtherSlicesAlone() throws {
        let half = ByteBuffer.smallestSharedData
        var whole = Self.buffer(count: 2 * half, capacity: 2 * half)
        let firstRead = whole.readSlice(length: half)
        let secondRead = whole.readSlice(length: half)
        let first = try #require(firstRead)
        let second = try #require(secondRead)
        let secondBefore = Data(second.readableBytesView)
        var data = first.readableData
        #expect(Self.sharesMemory(data, with: first))
        data[data.startIndex] ^= 0xFF
        data.append(contentsOf: [1, 2, 3])
        #expect(Data(second.readableBytesView) == secondBefore)
        #expect(data.count == half + 3)
    }
}
