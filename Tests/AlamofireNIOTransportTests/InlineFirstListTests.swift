import AFCollections
import Testing

/// `InlineFirstList` as a value: the same elements, order and equality as an `Array` built the same way.
@Suite struct InlineFirstListTests {
    @Test func anEmptyListHasNoElements() {
        let list = InlineFirstList<Int>()
        #expect(list.isEmpty && list.count == 0)
        #expect(list.first == nil && list.last == nil)
        #expect(list.array == [])
        #expect(Array(list) == [])
    }

    @Test func elementsKeepTheirOrderAcrossTheInlineOneAndTheRest() {
        var list = InlineFirstList(1)
        #expect(list.count == 1 && list.first == 1 && list.last == 1 && list[0] == 1)
        list.append(2)
        list.append(3)
        #expect(list.count == 3 && !list.isEmpty)
        #expect(list.first == 1 && list.last == 3)
        #expect((list[0], list[1], list[2]) == (1, 2, 3))
        #expect(list.array == [1, 2, 3])
        #expect(Array(list) == [1, 2, 3])
        #expect(list.map { $0 * 10 } == [10, 20, 30])
    }

    @Test func joiningListsKeepsEveryElementInOrder() {
        let empty = InlineFirstList<Int>()
        let one = InlineFirstList(1)
        let two: InlineFirstList = [2, 3]
        #expect((empty + empty).array == [])
        #expect((empty + one).array == [1])
        #expect((one + empty).array == [1])
        #expect((one + two).array == [1, 2, 3])
        #expect((two + one + two).array == [2, 3, 1, 2, 3])
        var growing = empty
        growing += two
        growing += one
        #expect(growing.array == [2, 3, 1])
        #expect(InlineFirstList(contentsOf: 4...6).array == [4, 5, 6])
    }

    @Test func equalityIsElementByElement() {
        #expect(InlineFirstList(1) == [1])
        #expect(InlineFirstList<Int>() == [])
        #expect(InlineFirstList(contentsOf: [1, 2]) == [1, 2])
        #expect(InlineFirstList(contentsOf: [1, 2]) != [2, 1])
        #expect(InlineFirstList(contentsOf: [1, 2]) != [1])
    }

    @Test func removingAllLeavesAnEmptyListThatTakesNewElements() {
        var list: InlineFirstList = [1, 2, 3]
        list.removeAll()
        #expect(list.isEmpty && list.array == [])
        list.append(7)
        #expect(list.array == [7] && list.last == 7)
    }

    @Test func mappingKeepsTheShape() {
        let list: InlineFirstList = [1, 2, 3]
        #expect(list.mapInline { "\($0)" }.array == ["1", "2", "3"])
        #expect(InlineFirstList<Int>().mapInline { $0 + 1 }.isEmpty)
    }
}
