import AFSynchronization
import Foundation
import Testing

@testable import AlamofireNIO

/// A stream request's delivery rules as a plain value: completions after the chunks being handled,
/// the loading task held while consumers hold too much.
@Suite struct StreamConsumersTests {
    typealias Consumers = StreamConsumers<String>

    @Test func aChunkGoesToEveryHandlerAndTheInputStreamAndCountsForEach() {
        var delivery = Consumers(maximumBufferedBytes: 100)
        delivery.addHandler { _ in }
        delivery.addHandler { _ in }
        let made = delivery.inputStream { DataStreamInputStream(bufferSize: 16) }
        let again = delivery.inputStream {
            Issue.record("made twice")
            return made
        }
        #expect(again === made)
        let taken = delivery.chunkArrived(bytes: 10)
        #expect(taken.handlers.count == 2 && taken.inputStream === made)
        #expect(delivery.chunksBeingHandled == 2)
        #expect(delivery.bufferedBytes == 30)
    }

    /// A completion waits until every chunk handed to a handler has been handled; the input
    /// stream's bytes do not hold it.
    @Test func aCompletionWaitsForTheChunksBeingHandled() {
        var delivery = Consumers(maximumBufferedBytes: 100)
        delivery.addHandler { _ in }
        _ = delivery.inputStream { DataStreamInputStream(bufferSize: 16) }
        _ = delivery.chunkArrived(bytes: 5)
        _ = delivery.chunkArrived(bytes: 5)
        let readyAtOnce = delivery.completionReady {}
        #expect(!readyAtOnce)
        let afterFirstHandler = delivery.consumerHandled(bytes: 5, byHandler: true)
        let afterInputStream = delivery.consumerHandled(bytes: 5, byHandler: false)
        let afterSecondHandler = delivery.consumerHandled(bytes: 5, byHandler: true)
        #expect(afterFirstHandler.completions.isEmpty && afterInputStream.completions.isEmpty)
        #expect(afterSecondHandler.completions.count == 1)
        let readyNow = delivery.completionReady {}
        #expect(readyNow)
        #expect(delivery.bufferedBytes == 5)
    }

    /// Above the limit the loading task gets a ticket and parks; it is resumed once the consumers
    /// are back at or under the limit, not before.
    @Test func theLoadingTaskWaitsWhileConsumersHoldTooMuch() throws {
        var delivery = Consumers(maximumBufferedBytes: 10)
        delivery.addHandler { _ in }
        _ = delivery.chunkArrived(bytes: 8)
        let underLimit = delivery.demandTicket()
        #expect(underLimit == nil)
        _ = delivery.chunkArrived(bytes: 8)
        let issued = delivery.demandTicket()
        let ticket = try #require(issued)
        let parked = delivery.park("loader", ticket: ticket, isCancelled: false).parked
        #expect(parked && delivery.isAwaitingDemand)
        let stillOver = delivery.consumerHandled(bytes: 5, byHandler: false)  // 11 held
        let atLimit = delivery.consumerHandled(bytes: 3, byHandler: true)  // 8 held
        #expect(stillOver.resume.isEmpty)
        #expect(atLimit.resume == ["loader"])
        #expect(!delivery.isAwaitingDemand)
    }

    /// Demand that returned between the ticket and the parking, or a cancelled task, is not parked.
    @Test func aWaiterIsNotParkedWhenDemandReturnedOrItWasCancelled() throws {
        var delivery = Consumers(maximumBufferedBytes: 10)
        delivery.addHandler { _ in }
        _ = delivery.chunkArrived(bytes: 20)
        let firstIssued = delivery.demandTicket()
        let first = try #require(firstIssued)
        let cancelledParked = delivery.park("cancelled", ticket: first, isCancelled: true).parked
        #expect(!cancelledParked)
        let secondIssued = delivery.demandTicket()
        let second = try #require(secondIssued)
        #expect(second != first)
        _ = delivery.consumerHandled(bytes: 20, byHandler: true)
        let lateParked = delivery.park("late", ticket: second, isCancelled: false).parked
        #expect(!lateParked)
        #expect(!delivery.isAwaitingDemand)
    }

    @Test func aCancelledWaiterIsUnparkedOnce() throws {
        var delivery = Consumers(maximumBufferedBytes: 0)
        delivery.addHandler { _ in }
        _ = delivery.chunkArrived(bytes: 1)
        let issued = delivery.demandTicket()
        let ticket = try #require(issued)
        let parked = delivery.park("loader", ticket: ticket, isCancelled: false).parked
        let first = delivery.unpark(ticket: ticket)
        let second = delivery.unpark(ticket: ticket)
        #expect(parked && first == "loader" && second == nil)
    }

    /// The end resumes every waiter and is remembered, with its error, for an input stream asked for later.
    @Test func theEndReleasesWaitersAndIsRemembered() throws {
        var delivery = Consumers(maximumBufferedBytes: 0)
        delivery.addHandler { _ in }
        _ = delivery.chunkArrived(bytes: 1)
        let issued = delivery.demandTicket()
        let ticket = try #require(issued)
        let parked = delivery.park("loader", ticket: ticket, isCancelled: false).parked
        #expect(parked)
        let ended = delivery.ended(error: .explicitlyCancelled)
        #expect(ended.resume == ["loader"] && ended.inputStream == nil)
        #expect(delivery.hasEnded && delivery.endError?.isExplicitlyCancelledError == true)
    }

    /// An observer of the wait runs once: handed back by the park that starts the wait, or at once
    /// when the task already waits; a park that does not wait hands none back.
    @Test func anObserverOfTheWaitRunsOnceTheTaskParks() throws {
        var delivery = Consumers(maximumBufferedBytes: 10)
        delivery.addHandler { _ in }
        let runs = Mutex([String]())
        let early = delivery.whenAwaitingDemand { runs.withLock { $0.append("early") } }
        #expect(early == nil)
        _ = delivery.chunkArrived(bytes: 20)
        let cancelledIssued = delivery.demandTicket()
        let cancelled = delivery.park("cancelled", ticket: try #require(cancelledIssued), isCancelled: true)
        #expect(!cancelled.parked && cancelled.observers.isEmpty)
        let issued = delivery.demandTicket()
        let parking = delivery.park("loader", ticket: try #require(issued), isCancelled: false)
        #expect(parking.parked && parking.observers.count == 1)
        parking.observers.forEach { $0() }
        let late = delivery.whenAwaitingDemand { runs.withLock { $0.append("late") } }
        late?()
        #expect(runs.withLock { $0 } == ["early", "late"])
        _ = delivery.consumerHandled(bytes: 20, byHandler: true)
        let againIssued = delivery.demandTicket()
        #expect(againIssued == nil)
        // A later wait hands back only observers added since; the end lets unrun ones go.
        _ = delivery.chunkArrived(bytes: 20)
        let laterIssued = delivery.demandTicket()
        let later = delivery.park("later", ticket: try #require(laterIssued), isCancelled: false)
        #expect(later.parked && later.observers.isEmpty)
        _ = delivery.consumerHandled(bytes: 20, byHandler: true)
        let unrun = delivery.whenAwaitingDemand { runs.withLock { $0.append("unrun") } }
        #expect(unrun == nil)
        _ = delivery.ended(error: nil)
        _ = delivery.chunkArrived(bytes: 20)
        let afterEndIssued = delivery.demandTicket()
        let afterEnd = delivery.park("after end", ticket: try #require(afterEndIssued), isCancelled: false)
        #expect(afterEnd.observers.isEmpty)
        #expect(runs.withLock { $0 } == ["early", "late"])
    }
}

/// The rule behind `whenAwaitingDemand(_:)`, shared by stream and WebSocket requests.
@Suite struct DemandObserversTests {
    @Test func keptUntilTheTaskParksRunAtOnceWhileItWaitsLetGoAtTheEnd() {
        var observers = DemandObservers()
        let runs = Mutex([String]())
        #expect(observers.add({ runs.withLock { $0.append("first") } }, isAwaitingDemand: false, hasEnded: false) == nil)
        #expect(observers.add({ runs.withLock { $0.append("second") } }, isAwaitingDemand: false, hasEnded: false) == nil)
        #expect(observers.count == 2)
        let parked = observers.taskParked()
        #expect(observers.count == 0)
        parked.forEach { $0() }
        #expect(runs.withLock { $0 } == ["first", "second"])
        // While the task waits, an observer comes straight back to run.
        let now = observers.add({ runs.withLock { $0.append("now") } }, isAwaitingDemand: true, hasEnded: false)
        #expect(observers.count == 0)
        now?()
        #expect(runs.withLock { $0 } == ["first", "second", "now"])
        // A second park hands back only observers added since.
        #expect(observers.taskParked().isEmpty)
        _ = observers.add({ runs.withLock { $0.append("unrun") } }, isAwaitingDemand: false, hasEnded: false)
        #expect(observers.count == 1)
        observers.requestEnded()
        #expect(observers.count == 0)
        // After the end an observer is not kept (the task will not wait again).
        #expect(observers.add({ runs.withLock { $0.append("late") } }, isAwaitingDemand: false, hasEnded: true) == nil)
        #expect(observers.count == 0)
        #expect(observers.taskParked().isEmpty)
        #expect(runs.withLock { $0 } == ["first", "second", "now"])
    }
}
