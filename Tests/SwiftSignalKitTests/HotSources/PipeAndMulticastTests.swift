import Testing

@testable import SwiftSignalKit

@Suite struct ValuePipeTests {
    @Test func deliversOnlyValuesSentAfterSubscription() {
        let pipe = ValuePipe<Int>()
        pipe.putNext(0)
        let first = Recorder<Int, NoError>()
        let subscription = first.start(pipe.signal())
        pipe.putNext(1)
        let second = Recorder<Int, NoError>()
        second.start(pipe.signal())
        pipe.putNext(2)
        subscription.dispose()
        pipe.putNext(3)
        #expect(first.values == [1, 2])
        #expect(second.values == [2, 3])
    }

    /// As the original's, and as its documentation and the Ordering section say: a value put from a
    /// callback is delivered there and then, so the subscribers after that one get it first.
    @Test func aValuePutFromACallbackReachesLaterSubscribersFirst() {
        let pipe = ValuePipe<Int>()
        let first = pipe.signal().start(next: { value in
            if value == 1 { pipe.putNext(2) }
        })
        let recorder = Recorder<Int, NoError>()
        let second = recorder.start(pipe.signal())
        pipe.putNext(1)
        #expect(recorder.values == [2, 1])
        first.dispose()
        second.dispose()
    }

    @Test func releasedPipeGivesASilentSignal() {
        var pipe: ValuePipe<Int>? = ValuePipe()
        let signal = pipe!.signal()
        pipe = nil
        let recorder = Recorder<Int, NoError>()
        recorder.start(signal)
        #expect(recorder.events.isEmpty)
        _ = pipe
    }

    /// Neither the signal nor a subscription to it keeps the pipe alive.
    @Test func signalAndSubscriptionDoNotRetainThePipe() {
        var pipe: ValuePipe<Int>? = ValuePipe()
        weak let weakPipe = pipe
        let signal = pipe!.signal()
        let subscription = signal.start(next: { _ in })
        pipe = nil
        #expect(weakPipe == nil)
        subscription.dispose()
        _ = pipe
    }

    /// Disposing a subscription after its pipe is gone is harmless, and still releases the callbacks.
    @Test func disposingAfterThePipeIsReleasedIsHarmlessAndReleasesTheCallbacks() {
        let tracker = LifetimeTracker()
        var pipe: ValuePipe<Int>? = ValuePipe()
        let subscription = pipe!.signal().start(next: { [captured = tracker.make()] _ in
            withExtendedLifetime(captured) {}
        })
        pipe = nil
        #expect(tracker.live.value == 1)
        subscription.dispose()
        subscription.dispose()
        #expect(tracker.live.value == 0)
        _ = pipe
    }
}

@Suite struct MulticastTests {
    /// Bug 6 of the original: the instance was never stored, so every subscriber started its own source.
    @Test func sharesOneSubscriptionPerKey() {
        let starts = Counter()
        let disposals = Counter()
        let pipe = ValuePipe<Int>()
        let source = Signal<Int, NoError> { subscriber in
            starts.increment()
            let inner = pipe.signal().start(next: { subscriber.putNext($0) })
            return ActionDisposable {
                disposals.increment()
                inner.dispose()
            }
        }
        let multicast = Multicast<Int>()
        let first = Recorder<Int, NoError>()
        let second = Recorder<Int, NoError>()
        let a = first.start(multicast.get(key: "k", signal: source))
        let b = second.start(multicast.get(key: "k", signal: source))
        pipe.putNext(1)
        #expect(starts.value == 1)
        #expect(first.values == [1])
        #expect(second.values == [1])
        a.dispose()
        #expect(disposals.value == 0)
        b.dispose()
        #expect(disposals.value == 1, "the last subscriber leaving disposes the source")
        let third = Recorder<Int, NoError>()
        let c = third.start(multicast.get(key: "k", signal: source))
        #expect(starts.value == 2, "a new subscriber after everyone left starts the source again")
        c.dispose()
    }

    /// Bug 6 of the original, second half: errors were swallowed.
    @Test func errorsAndCompletionReachEverySubscriber() {
        let captured = CapturedSubscriber<Int, TestError>()
        let multicast = Multicast<Int>()
        let source = captured.signal()
        let first = Recorder<Int, TestError>()
        let second = Recorder<Int, TestError>()
        first.start(multicast.get(key: "k", signal: source))
        second.start(multicast.get(key: "k", signal: source))
        captured.subscriber?.putNext(1)
        captured.subscriber?.putError(TestError(code: 9))
        #expect(first.events == [.next(1), .error(TestError(code: 9))])
        #expect(second.events == [.next(1), .error(TestError(code: 9))])

        let third = Recorder<Int, TestError>()
        third.start(multicast.get(key: "k", signal: source))
        captured.subscriber?.putCompletion()
        #expect(third.events == [.completed], "after an error the key starts a fresh subscription")
    }

    @Test func differentKeysAreIndependent() {
        let starts = Counter()
        let source = Signal<Int, NoError> { _ in
            starts.increment()
            return EmptyDisposable
        }
        let multicast = Multicast<Int>()
        let a = multicast.get(key: "a", signal: source).start()
        let b = multicast.get(key: "b", signal: source).start()
        #expect(starts.value == 2)
        a.dispose()
        b.dispose()
    }

    /// A value that a subscriber's callback makes the source send reaches every subscriber after the
    /// current one, so all of them see the same order. (Before the multicast ran on the fan-out engine,
    /// the fed-back value was delivered inside the current delivery: the second subscriber saw 2, then 1.)
    @Test func aValueFedBackFromACallbackReachesEverySubscriberInOneOrder() {
        let pipe = ValuePipe<Int>()
        let multicast = Multicast<Int>()
        let shared = multicast.get(key: "k", signal: pipe.signal())
        let first = Recorder<Int, NoError>()
        let second = Recorder<Int, NoError>()
        let a = shared.start(next: { value in
            first.append(.next(value))
            if value == 1 { pipe.putNext(2) }
        })
        let b = second.start(shared)
        pipe.putNext(1)
        #expect(first.values == [1, 2])
        #expect(second.values == [1, 2])
        a.dispose()
        b.dispose()
    }

    /// Values and errors need not be `Sendable`, as in the original library: each reaches the subscribers
    /// on the thread the source sent it from.
    @Test func valuesThatAreNotSendablePassThrough() {
        final class Draft {
            var text: String
            init(_ text: String) { self.text = text }
        }
        let multicast = Multicast<Draft>()
        let source = Signal<Draft, NoError> { subscriber in
            subscriber.putNext(Draft("hello"))
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let texts = Recorder<String, NoError>()
        let completions = Counter()
        _ = multicast.get(key: "k", signal: source).start(
            next: { draft in texts.append(.next(draft.text)) }, completed: { completions.increment() })
        #expect(texts.values == ["hello"])
        #expect(completions.value == 1)
    }

    /// A loop inside the source's generator (`restart` of a synchronous source) learns that every
    /// subscriber has ended, as it does behind `share`: `take(1)` below a multicast spun for ever, since
    /// the multicast subscribed to its source with a subscriber linked to nothing. (The source here fails
    /// after 1,000 starts, so that the test ends either way.)
    @Test func takeOneStopsAnEndlessSynchronousSourceBehindAMulticast() {
        let starts = Counter()
        let source = restart(boundedEndlessSource(starts: starts))
        let multicast = Multicast<Int>()
        let first = Recorder<Int, TestError>()
        first.start(multicast.get(key: "k", signal: source) |> take(1))
        #expect(first.events == [.next(1), .completed])
        #expect(starts.value == 1, "the loop stops once its only subscriber has ended")

        // The instance the loop gave up is forgotten: the key's next subscriber starts the source again.
        let second = Recorder<Int, TestError>()
        second.start(multicast.get(key: "k", signal: source) |> take(2))
        #expect(second.events == [.next(2), .next(3), .completed])
        #expect(starts.value == 3)
    }

    /// The loop goes on while any subscriber listens, also when the first several the multicast looks
    /// at have ended.
    @Test func aLoopBehindAMulticastGoesOnWhileALaterSubscriberListens() {
        let starts = Counter()
        let multicast = Multicast<Int>()
        let shared = multicast.get(key: "k", signal: restart(boundedEndlessSource(starts: starts)))
        let last = Recorder<Int, TestError>()
        _ = (shared |> take(1)).start(next: { _ in
            // Joined during the loop: five that end at the next value, then one that wants three.
            for _ in 0..<5 { _ = (shared |> take(1)).start() }
            last.start(shared |> take(3))
        })
        #expect(last.events == [.next(2), .next(3), .next(4), .completed])
        #expect(starts.value == 4, "the loop ends once every subscriber has ended")
    }

    @Test func multicastPromiseIsAPlainContainer() {
        let promise = MulticastPromise<Int>()
        promise.lock.locked {
            promise.value = 1
            _ = promise.subscribers.add { _ in }
        }
        #expect(promise.lock.locked { promise.value } == 1)
    }
}

@Suite struct MulticastStressTests {
    @Test func concurrentJoinAndLeaveNeverLeavesTheSourceRunning() async {
        let running = Counter()
        let source = Signal<Int, NoError> { _ in
            running.increment()
            return ActionDisposable { running.decrement() }
        }
        let multicast = Multicast<Int>()
        await concurrently(8) { _ in
            for _ in 0..<500 {
                multicast.get(key: "k", signal: source).start().dispose()
            }
        }
        #expect(running.value == 0)
    }

    @Test func pipeConcurrentSubscribeAndPut() async {
        let pipe = ValuePipe<Int>()
        let received = Counter()
        let keep = pipe.signal().start(next: { _ in received.increment() })
        await concurrently(6) { index in
            for value in 0..<2_000 {
                if index % 2 == 0 {
                    pipe.putNext(value)
                } else {
                    pipe.signal().start(next: { _ in }).dispose()
                }
            }
        }
        keep.dispose()
        #expect(received.value == 3 * 2_000)
    }
}

/// A source that sends its start's number and completes, and fails from its 1,001st start: behind
/// `restart`, an endless synchronous loop that still ends if nothing stops it.
private func boundedEndlessSource(starts: Counter) -> Signal<Int, TestError> {
    return Signal { subscriber in
        let start = starts.increment()
        if start > 1_000 {
            subscriber.putError(TestError(code: start))
        } else {
            subscriber.putNext(start)
            subscriber.putCompletion()
        }
        return EmptyDisposable
    }
}
