import NIOHTTP2
import Testing

@testable import AlamofireNIOTransport

@Suite struct HTTP2ConnectionStateMachineTests {
    typealias Machine = HTTP2ConnectionStateMachine

    @Test func theFirstSettingsMakeItReadyWithTheServersLimit() {
        var machine = Machine()
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .maxConcurrentStreams, value: 7)]) == .ready(maximumStreams: 7))
        #expect(machine.state == .active(maximumStreams: 7))
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .maxConcurrentStreams, value: 7)]) == .none)
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .maxConcurrentStreams, value: 20)]) == .maximumStreamsChanged(20))
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .initialWindowSize, value: 1)]) == .none)
    }

    @Test func settingsWithoutALimitAssumeTheDefault() {
        var machine = Machine()
        #expect(machine.settingsReceived([]) == .ready(maximumStreams: Machine.defaultMaximumStreams))
    }

    @Test func goAwayWithOpenStreamsDrainsThenCloses() {
        var machine = Machine()
        _ = machine.settingsReceived([])
        machine.streamOpened()
        machine.streamOpened()
        #expect(machine.goAwayReceived(lastStreamID: 3) == .goingAway(close: false))
        #expect(machine.lastStreamID == 3)
        #expect(!machine.isActive)
        #expect(machine.streamClosed() == .none)
        #expect(machine.streamClosed() == .close)
        // A later GOAWAY may only lower the last stream id.
        #expect(machine.goAwayReceived(lastStreamID: 5) == .none)
        #expect(machine.lastStreamID == 3)
    }

    @Test func goAwayWhenIdleClosesAtOnce() {
        var machine = Machine()
        _ = machine.settingsReceived([])
        #expect(machine.goAwayReceived(lastStreamID: 0) == .goingAway(close: true))
    }

    @Test func goAwayBeforeSettingsFailsTheStart() {
        var machine = Machine()
        #expect(machine.goAwayReceived(lastStreamID: 0) == .failStart)
        #expect(machine.settingsReceived([]) == .none)
    }

    @Test func idleConnectionsPingAndCloseWhenAPingGoesUnanswered() {
        var machine = Machine()
        #expect(machine.pingTimerFired() == .none)
        _ = machine.settingsReceived([])
        #expect(machine.pingTimerFired() == .sendPing)
        machine.pingAcknowledged()
        #expect(machine.pingTimerFired() == .sendPing)
        #expect(machine.pingTimerFired() == .close)
    }

    @Test func busyConnectionsDoNotPing() {
        var machine = Machine()
        _ = machine.settingsReceived([])
        machine.streamOpened()
        #expect(machine.pingTimerFired() == .none)
        _ = machine.streamClosed()
        #expect(machine.pingTimerFired() == .sendPing)
    }
}
