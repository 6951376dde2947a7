import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// Operators that start a signal of their own after some event (an alternate, a new inner signal, a
/// replacement, the next source) never start it once the subscription has ended: neither after a
/// disposal that came while user code (a disposable) ran, nor for a subscriber that already took what it
/// wanted (`get()`). Such a start would run a request only to cancel it at once.
@Suite struct NothingStartsAfterTheEndTests {
    /// A signal that counts its starts and sends nothing.
    private func counted(_ starts: Counter) -> Signal<Int, NoError> {
        return Signal { _ in
            starts.increment()
            return EmptyDisposable
        }
    }

    /// "A task cancelled before it starts waiting never subscribes", for a sequence too: made in a
    /// cancelled task, `values` subscribed at once (it subscribes when made) and the cold signal's
    /// generator ran, a request made for a loop that then ended at once.
    @Test func valuesMadeInACancelledTaskStartNothing() async {
        let starts = Counter()
        let ended = await Task { () -> (SignalValuesEndReason?, Int) in
            withUnsafeCurrentTask { $0?.cancel() }
            let values = self.counted(starts).values
            var received = 0
            for await _ in values { received += 1 }
            return (values.endReason, received)
        }.value
        #expect(starts.value == 0)
        #expect(ended.0 == .cancelled)
        #expect(ended.1 == 0)
    }

    /// The deadline passes, and the source's disposable disposes the whole subscription (a user's
    /// disposable that ends the screen, say): the alternate is not started.
    @Test func timeoutStartsNoAlternateAfterADisposalDuringTheSourcesDisposal() {
        let scheduler = VirtualTimeScheduler()
        let outer = Atomic<Disposable?>(value: nil)
        let alternateStarts = Counter()
        let source = Signal<Int, NoError> { _ in ActionDisposable { outer.with { $0 }?.dispose() } }
        _ = outer.swap(
            (source |> timeout(1, scheduler: scheduler, alternate: self.counted(alternateStarts))).start())
        scheduler.advance(by: 1)
        #expect(alternateStarts.value == 0)
    }

    /// The outer signal sends a second inner signal; the first one's disposable disposes the whole
    /// subscription. The second is started before the first is disposed (as in the original library,
    /// so that a shared source stays connected across a switch), and that disposal, the end, disposes
    /// it too: started before the end, it does not outlive it.
    @Test func switchToLatestDisposesTheNewInnerWhenTheReplacedInnersDisposalEndsIt() {
        let outer = Atomic<Disposable?>(value: nil)
        let sendSecond = Atomic<Subscriber<Signal<Int, NoError>, NoError>?>(value: nil)
        let order = LockedState<[String]>([])
        let first = Signal<Int, NoError> { _ in
            ActionDisposable {
                order.withLock { $0.append("first disposed") }
                outer.with { $0 }?.dispose()
            }
        }
        let second = Signal<Int, NoError> { _ in
            order.withLock { $0.append("second started") }
            return ActionDisposable { order.withLock { $0.append("second disposed") } }
        }
        let inners = Signal<Signal<Int, NoError>, NoError> { subscriber in
            _ = sendSecond.swap(subscriber)
            subscriber.putNext(first)
            return EmptyDisposable
        }
        _ = outer.swap((inners |> switchToLatest).start())
        sendSecond.with { $0 }?.putNext(second)
        #expect(order.withLock { $0 } == ["second started", "first disposed", "second disposed"])
        sendSecond.with { $0 }?.putNext(self.counted(Counter()))
        _ = sendSecond.swap(nil)
    }

    /// The first inner answers `get()` while the outer signal starts, and the outer signal goes on to
    /// send a second: the second is not started.
    @Test func switchToLatestStartsNoInnerForASubscriberThatEnded() async {
        let secondStarts = Counter()
        let inners = Signal<Signal<Int, NoError>, NoError> { subscriber in
            subscriber.putNext(.single(1))
            subscriber.putNext(self.counted(secondStarts))
            return EmptyDisposable
        }
        #expect(await (inners |> switchToLatest).first() == 1)
        #expect(secondStarts.value == 0)
    }

    @Test func catchStartsNoReplacementForASubscriberThatEnded() async throws {
        let replacementStarts = Counter()
        let failing = Signal<Int, TestError> { subscriber in
            subscriber.putNext(1)
            subscriber.putError(TestError(code: 1))
            return EmptyDisposable
        }
        let recovered = failing |> `catch` { _ in self.counted(replacementStarts) |> castError(TestError.self) }
        #expect(try await recovered.get() == 1)
        #expect(replacementStarts.value == 0)
    }

    @Test func mergeStartsNoFurtherSourceForASubscriberThatEnded() async {
        let laterStarts = Counter()
        #expect(await merge([Signal<Int, NoError>.single(1), self.counted(laterStarts)]).first() == 1)
        #expect(laterStarts.value == 0)
    }

    @Test func combineLatestStartsNoSourceForASubscriberThatTookTheInitialValues() async {
        let starts = Counter()
        let combined = combineLatest(self.counted(starts), 1, self.counted(starts), 2)
        #expect(await combined.first().map { [$0.0, $0.1] } == [1, 2])
        #expect(starts.value == 0)
    }
}
