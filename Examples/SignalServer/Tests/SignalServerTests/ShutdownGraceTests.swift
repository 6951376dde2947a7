import Foundation
import MarketDomain
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

@testable import SignalServerApp

/// A trade waiting for a log that does not answer (a database that is down) when graceful shutdown
/// begins is answered 503 after the shutdown grace, not held to its deadline (up to a minute) past the
/// service group's backstop, which cancelled it without an answer.
@Suite struct ShutdownGraceTests {
    /// A log that never answers a publish, and counts the publishes waiting.
    final class SilentLog: TradeLog {
        let waiting = Atomic(value: 0)

        func publish(_ trade: Trade) -> Signal<Trade, MarketError> {
            return Signal { [waiting] _ in
                waiting.modify { $0 + 1 }
                return ActionDisposable { waiting.modify { $0 - 1 } }
            }
        }

        func history(after: Int, through: Int) -> Signal<[Trade]?, MarketError> {
            return .single(after == through ? [] : nil)
        }
    }

    /// Events of `signal` as text, on virtual time.
    final class Recorder: Sendable {
        let events = Atomic<[String]>(value: [])

        func start(_ signal: Signal<Int, MarketError>, _ scheduler: VirtualTimeScheduler) -> any Disposable {
            return signal.start(
                next: { value in self.events.modify { $0 + ["\(scheduler.now) value \(value)"] } },
                error: { error in self.events.modify { $0 + ["\(scheduler.now) \(error)"] } },
                completed: { self.events.modify { $0 + ["\(scheduler.now) completed"] } })
        }
    }

    @Test func anAnswerThatHasNotComeFailsGraceSecondsAfterTheClose() {
        let scheduler = VirtualTimeScheduler()
        let closed = ValuePromise<Int>()
        let disposed = Atomic(value: false)
        let answer = Signal<Int, MarketError>.never() |> afterDisposed { disposed.swap(true) }
        let recorder = Recorder()
        let subscription = recorder.start(
            answer |> failingAfterShutdown(closed.get(), grace: 2, on: scheduler, with: { MarketError.logUnavailable($0) }), scheduler)
        scheduler.advance(by: 100)
        #expect(recorder.events.with { $0 }.isEmpty, "nothing happens before the close, however long the answer takes")
        closed.set(7)
        scheduler.advance(by: 1.999)
        #expect(recorder.events.with { $0 }.isEmpty)
        scheduler.advance(by: 0.001)
        #expect(
            recorder.events.with { $0 } == [
                "102.0 logUnavailable(\"no answer 2000 ms after the server began shutting down\")"
            ])
        #expect(disposed.with { $0 }, "the answer is disposed with the failure")
        subscription.dispose()
    }

    @Test func anAnswerThatComesWithinTheGraceIsTheAnswer() {
        let scheduler = VirtualTimeScheduler()
        let closed = ValuePromise<Int>()
        let answer = ValuePipe<Int>()
        let recorder = Recorder()
        let subscription = recorder.start(
            answer.signal() |> castError(MarketError.self)
                |> failingAfterShutdown(closed.get(), grace: 2, on: scheduler, with: { MarketError.logUnavailable($0) }), scheduler)
        closed.set(7)
        scheduler.advance(by: 1.5)
        answer.putNext(42)
        #expect(recorder.events.with { $0 } == ["1.5 value 42"])
        subscription.dispose()
        #expect(scheduler.scheduledActionCount == 0, "disposing cancels the cut-off's timer")
    }

    /// Over HTTP: a trade whose log never answers, with a 60 s deadline, gets 503 `log_unavailable` once
    /// the shutdown has begun and the grace has passed, and the server stops. Before, its client got no
    /// answer at all, and the shutdown took the 30 s backstop.
    @Test func aTradeWaitingForTheLogAtShutdownIsAnswered503() async throws {
        let log = SilentLog()
        try await withServer({ $0.shutdownGrace = 0.2 }, log: { _ in log }) { server in
            async let reply = server.post("trades?deadline_ms=60000", body: #"{"symbol": "ACME", "price": 101.5, "size": 1}"#)
            try await eventually("the trade waits for the log") { log.waiting.with { $0 } == 1 }
            await server.group.triggerGracefulShutdown()
            let answered = try await reply
            #expect(answered.status == 503)
            let body = try answered.decoded(ErrorBody.self)
            #expect(body.error == "log_unavailable")
            #expect(body.message.contains("no answer 200 ms after the server began shutting down"))
            #expect(log.waiting.with { $0 } == 0, "the publish is disposed")
        }
    }
}
