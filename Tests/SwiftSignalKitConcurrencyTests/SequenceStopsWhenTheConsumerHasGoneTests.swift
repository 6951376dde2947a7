import SwiftSignalKitConcurrency
import Testing

@testable import SwiftSignalKit

/// `Signal(sequence)` under a consumer that paces it: once the consumer has gone, the sequence is not
/// read on. A probe found (2026-11-30) that after a `for await` loop over `values(bufferingPolicy:
/// .bounded(2))` ended, the sequence's task pulled freely (up to a dozen elements in a release build)
/// until the disposal that cancels it landed: the loop's end let every wait for room return at once.
@Suite struct SequenceStopsWhenTheConsumerHasGoneTests {
    /// The integers from 0, counting the pulls, and those made in a cancelled task.
    struct LoggedSequence: AsyncSequence, Sendable {
        typealias Element = Int
        typealias Failure = Never

        let count: Int
        let pulls = Counter()
        let cancelledPulls = Counter()

        struct AsyncIterator: AsyncIteratorProtocol {
            let sequence: LoggedSequence
            var next = 0

            mutating func next() async -> Int? {
                if Task.isCancelled { self.sequence.cancelledPulls.increment() }
                self.sequence.pulls.increment()
                guard self.next < self.sequence.count else { return nil }
                defer { self.next += 1 }
                return self.next
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            return AsyncIterator(sequence: self)
        }
    }

    /// A consumer that has room for `room` values, then has gone, and never disposes the subscription:
    /// the moment between a loop's end and the disposal that cancels the sequence's task, held open.
    final class GoneAfter: SignalDemand {
        let granted = Counter()
        let room: Int

        init(room: Int) {
            self.room = room
        }

        var pacesProducers: Bool { true }

        /// Not asked: nothing here runs inside a generator.
        var consumerHasGone: Bool { false }

        func waitForRoom() async -> Bool {
            return self.granted.increment() <= self.room
        }
    }

    @Test func theSequenceStopsOnceThePacingConsumerHasGone() async {
        let sequence = LoggedSequence(count: 1_000)
        let received = Atomic<[Int]>(value: [])
        let completed = Counter()
        let subscription = Signal(sequence).start(
            next: { value in received.modify { $0 + [value] } }, error: nil, completed: { completed.increment() },
            pacedBy: GoneAfter(room: 3))
        // The task ends with one pull in its cancelled task, which tells the sequence (it used to read the
        // sequence to its end and complete).
        await eventually { sequence.cancelledPulls.value == 1 || completed.value == 1 }
        #expect(received.with { $0 } == [0, 1, 2])
        #expect(sequence.pulls.value == 4, "three values and the pull that tells the sequence")
        #expect(completed.value == 0)
        subscription.dispose()
    }

    /// The same through a loop that breaks: at most the bound's values, one pull under way and the one
    /// that tells the sequence follow the last value the loop took.
    @Test func aBoundedLoopThatBreaksLeavesTheSequenceWhereItWas() async {
        for _ in 0..<200 {
            let sequence = LoggedSequence(count: 1_000_000)
            var taken = 0
            for await _ in Signal(sequence).values(bufferingPolicy: .bounded(2)) {
                taken += 1
                if taken == 20 { break }
            }
            await eventually { sequence.cancelledPulls.value >= 1 }
            #expect(sequence.pulls.value <= 20 + 2 + 1 + 1)
        }
    }
}

/// `Signal(sequence)` under a subscriber that took its last value (`get()`, `first()`, `take(n)`): the
/// sequence is not read on. A probe found (2026-11-30) that under load `get()` of such a signal pulled
/// up to 2,219 elements in a release build before the disposal that cancels the task landed: the first
/// value can arrive before `start` has even stored that disposal, and nothing else told the task.
///
/// These signals start the sequence's generator and drop its disposable, so the task is never cancelled
/// from outside: the moment before the disposal lands, held open.
@Suite struct SequenceStopsWhenItsSubscriberHasEndedTests {
    typealias LoggedSequence = SequenceStopsWhenTheConsumerHasGoneTests.LoggedSequence

    /// `Signal(sequence)` whose subscriptions cannot cancel its task.
    func undisposable(_ sequence: LoggedSequence) -> Signal<Int, Never> {
        let source = Signal(sequence)
        return Signal { subscriber in
            _ = source.generator(subscriber)
            return EmptyDisposable
        }
    }

    @Test func getStopsTheSequenceAfterItsValue() async throws {
        let sequence = LoggedSequence(count: 1_000)
        #expect(try await self.undisposable(sequence).get() == 0)
        await eventually { sequence.cancelledPulls.value == 1 || sequence.pulls.value > 1_000 }
        #expect(sequence.pulls.value == 2, "the value and the pull that tells the sequence")
    }

    @Test func firstStopsTheSequenceAfterItsValue() async {
        let sequence = LoggedSequence(count: 1_000)
        #expect(await self.undisposable(sequence).first() == 0)
        await eventually { sequence.cancelledPulls.value == 1 || sequence.pulls.value > 1_000 }
        #expect(sequence.pulls.value == 2, "the value and the pull that tells the sequence")
    }

    /// Through operators: the subscriber the sequence sends to is the operator's, which learns of the end
    /// below it only from the disposal.
    @Test func getThroughOperatorsStopsTheSequenceAfterItsValue() async throws {
        let sequence = LoggedSequence(count: 1_000)
        let signal = self.undisposable(sequence) |> filter { $0 >= 2 } |> beforeNext { _ in } |> map { $0 * 10 }
        #expect(try await signal.get() == 20)
        await eventually { sequence.cancelledPulls.value == 1 || sequence.pulls.value > 1_000 }
        #expect(sequence.pulls.value == 4, "three elements and the pull that tells the sequence")
    }

    @Test func takeStopsTheSequenceAfterItsLastValue() async {
        let sequence = LoggedSequence(count: 1_000)
        let received = Atomic<[Int]>(value: [])
        let completed = Counter()
        let subscription = (self.undisposable(sequence) |> take(3)).start(
            next: { value in received.modify { $0 + [value] } }, completed: { completed.increment() })
        await eventually { sequence.cancelledPulls.value == 1 || sequence.pulls.value > 1_000 }
        #expect(received.with { $0 } == [0, 1, 2])
        #expect(completed.value == 1)
        #expect(sequence.pulls.value == 4, "three values and the pull that tells the sequence")
        subscription.dispose()
    }
}
