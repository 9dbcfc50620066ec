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

    /// A large chunk filling its storage is shared: the `Data` keeps the storage alive once the
    /// buffer is gone, and lets it go when released.
    @Test func aLargeDenseChunkIsSharedAndHeldAsLongAsItsData() {
        let count = ByteBuffer.smallestSharedData
        var buffer: ByteBuffer? = Self.buffer(count: count, capacity: count)
        weak let storage: AnyObject? = buffer!.withUnsafeReadableBytesWithStorageManagement { $1.takeUnretainedValue() }
        var data: Data? = buffer!.readableData
        let expected = Data(buffer!.readableBytesView)
        #expect(Self.sharesMemory(data!, with: buffer!))
        buffer = nil
        #expect(storage != nil)
        #expect(data == expected)
        data = nil
        #expect(storage == nil)
    }

    /// A shared `Data` that grows moves to memory of its own and lets the buffer's storage go.
    @Test func aSharedDataThatGrowsLetsTheStorageGo() {
        let count = ByteBuffer.smallestSharedData
        var buffer: ByteBuffer? = Self.buffer(count: count, capacity: count)
        weak let storage: AnyObject? = buffer!.withUnsafeReadableBytesWithStorageManagement { $1.takeUnretainedValue() }
        var data = buffer!.readableData
        let expected = Data(buffer!.readableBytesView) + [7]
        buffer = nil
        data.append(7)
        #expect(storage == nil)
        #expect(data == expected)
    }

    /// A chunk under the size, or under three quarters of a large storage, is copied.
    @Test func smallOrSparseChunksAreCopied() {
        let small = Self.buffer(count: ByteBuffer.smallestSharedData - 1, capacity: ByteBuffer.smallestSharedData - 1)
        // 64 KiB in 128 KiB: under three quarters full.
        let sparse = Self.buffer(count: ByteBuffer.smallestSharedData, capacity: 2 * ByteBuffer.smallestSharedData)
        for buffer in [small, sparse] {
            let data = buffer.readableData
            #expect(!Self.sharesMemory(data, with: buffer))
            #expect(data == Data(buffer.readableBytesView))
        }
        #expect(ByteBuffer().readableData.isEmpty)
    }

    /// A shared `Data` changed in place writes within its own bytes only: a second slice of the same
    /// storage keeps what it read.
    @Test func changingASharedDataLeavesOtherSlicesAlone() throws {
        let storage = 2 * ByteBuffer.smallestSharedData
        let firstLength = storage - 16 * 1024
        var whole = Self.buffer(count: storage, capacity: storage)
        let firstRead = whole.readSlice(length: firstLength)
        let secondRead = whole.readSlice(length: storage - firstLength)
        let first = try #require(firstRead)
        let second = try #require(secondRead)
        let secondBefore = Data(second.readableBytesView)
        var expected = Data(first.readableBytesView)
        var data = first.readableData
        #expect(Self.sharesMemory(data, with: first))
        data[data.startIndex] ^= 0xFF
        data[data.endIndex - 1] ^= 0xFF
        expected[expected.startIndex] ^= 0xFF
        expected[expected.endIndex - 1] ^= 0xFF
        #expect(data == expected)
        #expect(Data(second.readableBytesView) == secondBefore)
    }
}
