import Testing

@testable import AlamofireNIOLoading

/// An answer that comes while its asker is still asking is the asker's to handle; one that comes
/// later is the callback's. Exactly one of the two handles it.
@Suite struct InlineAnswerTests {
    @Test func anAnswerBeforeTheAskerStopsIsTheAskers() {
        let answer = InlineAnswer<Int?>()
        #expect(answer.keepIfAsking(7))
        #expect(answer.stopAsking() == .some(7))
    }

    /// A refusal (nil) answered inline is still an answer: the asker stores nothing and completes.
    @Test func aNilAnswerBeforeTheAskerStopsIsTheAskersToo() {
        let answer = InlineAnswer<Int?>()
        #expect(answer.keepIfAsking(nil))
        #expect(answer.stopAsking() == .some(.none))
    }

    @Test func anAnswerAfterTheAskerStoppedIsTheCallbacks() {
        let answer = InlineAnswer<Int?>()
        #expect(answer.stopAsking() == nil)
        #expect(!answer.keepIfAsking(7))
        #expect(answer.stopAsking() == nil)
    }
}
