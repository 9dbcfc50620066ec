import Foundation
import Testing

@testable import AlamofireNIOLoading

/// Request ids made without a system call: distinct, and well-formed version 4 UUIDs.
@Suite struct RandomUUIDTests {
    /// The version nibble and the RFC 4122 variant bits of `id`.
    private func versionAndVariant(_ id: UUID) -> (version: UInt8, variant: UInt8) {
        (id.uuid.6 >> 4, id.uuid.8 >> 6)
    }

    @Test func uniqueIdsAreDistinctVersionFourUUIDs() async {
        // From several threads at once, as requests are made.
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<4 { group.addTask { (0..<25_000).map { _ in UUID.unique() } } }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(ids.count == 100_000)
        #expect(Set(ids).count == 100_000)
        for id in ids.prefix(1_000) {
            #expect(versionAndVariant(id) == (4, 0b10))
        }
    }

    @Test func uniqueIdsDoNotCountVisibly() {
        // Consecutive ids differ in many bits, not only the last: the counter is mixed.
        let first = UUID.unique().uuid
        let second = UUID.unique().uuid
        let differingBytes = zip(
            withUnsafeBytes(of: first) { Array($0) }, withUnsafeBytes(of: second) { Array($0) }
        ).filter { $0 != $1 }.count
        #expect(differingBytes >= 8)
        // Every bit of the first half is used: ids do not all start with 0 to 3.
        let leadingBytes = Set((0..<64).map { _ in UUID.unique().uuid.0 >> 6 })
        #expect(leadingBytes == [0, 1, 2, 3])
    }

    @Test func randomIdsAreVersionFourUUIDs() {
        let ids = (0..<100).map { _ in UUID.random() }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { versionAndVariant($0) == (4, 0b10) })
    }
}
