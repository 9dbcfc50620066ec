import AFSynchronization
import Testing

@testable import AlamofireNIOLoading

/// A task's current piece of work and how to stop it, as a plain value.
@Suite struct CurrentWorkTests {
    @Test func eachPieceOfWorkGetsANewGeneration() {
        var work = CurrentWork()
        let first = work.start()
        let second = work.start()
        #expect(first == 1 && second == 2)
        #expect(work.generation == 2)
        #expect(work.cancel == nil)
    }

    /// A fast exchange may lead to the next hop before it says how to stop it: that late word is not
    /// kept, and the newer work's is.
    @Test func onlyTheNewestWorkIsKept() {
        var work = CurrentWork()
        let first = work.start()
        let second = work.start()
        let stopped = Collected()
        // A new piece forgets how the last one stopped.
        var forgetting = CurrentWork()
        let started = forgetting.start()
        let set = forgetting.setCancel({}, for: started)
        #expect(set)
        _ = forgetting.start()
        #expect(forgetting.cancel == nil)
        let lateKept = work.setCancel({ stopped.append("first") }, for: first)
        #expect(!lateKept)
        #expect(work.cancel == nil)
        let newestKept = work.setCancel({ stopped.append("second") }, for: second)
        #expect(newestKept)
        work.cancel?()
        #expect(stopped.values == ["second"])
    }

    @Test func endingForgetsHowToStop() {
        var work = CurrentWork()
        let generation = work.start()
        let kept = work.setCancel({}, for: generation)
        #expect(kept)
        work.end()
        #expect(work.cancel == nil)
        #expect(work.generation == generation)
    }
}

/// Collects strings from any thread.
final class Collected: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ value: String) { storage.withLock { $0.append(value) } }
    var values: [String] { storage.withLock { $0 } }
}
