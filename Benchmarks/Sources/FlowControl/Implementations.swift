// The implementations: one producer task sends 0..<elements, one consumer task takes them with
// `for await`. The consumer is a task the run starts, with the same loop in every implementation; the
// producer is the task the library starts for the generator or `Signal(sequence)`, or, for the channel
// and AsyncStream, the run's own task. The run returns what the consumer took once the sequence ended.

import AsyncAlgorithms
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Which producer and sequence carry the elements.
enum Implementation: String, CaseIterable, Sendable {
    /// An async generator sending with `await send.waitingForRoom(i)`, iterated over
    /// `values(bufferingPolicy: .bounded(bound))`.
    case library = "signalkit"
    /// `Signal(sequence)` of an async sequence of 0..<elements, iterated over `.bounded(bound)`: the
    /// bridge pulls the next element only when the loop has room.
    case librarySequence = "signalkit-sequence"
    /// `MultiProducerSingleConsumerAsyncChannel` with `.watermark(low: bound / 2, high: bound)`, its
    /// source's async `send`.
    case channel = "mpsc-channel"
    /// `AsyncStream` with `.unbounded` buffering: `yield` never waits, so it keeps whatever the consumer
    /// has not taken yet.
    case asyncStream = "asyncstream"
    /// A producer that cannot wait: a thread of its own calling the subscriber's synchronous `putNext`
    /// for each element, iterated over `.bounded(bound)`. The first value that finds `bound` waiting
    /// ends the loop (`endReason == .producerCouldNotWait`), so the loop takes at most `bound + 1`.
    case librarySynchronousBounded = "signalkit-sync-bounded"
    /// The same producer iterated over `.unbounded`: every element arrives, and what the loop has not
    /// taken waits in the buffer.
    case librarySynchronousUnbounded = "signalkit-sync-unbounded"

    /// Whether the loop is meant to end before it has taken every element.
    var endsEarly: Bool { self == .librarySynchronousBounded }
}

/// Sends `elements` values through `implementation` to a consumer that does `consumer`'s work, and
/// returns what the consumer took.
///
/// - Parameter bound: The library's `.bounded` bound and the channel's high watermark (its low one is
///   half of it): with one producer both keep at most `bound` elements waiting for the loop.
func run(_ implementation: Implementation, elements: Int, consumer: Consumer, bound: Int) async -> Consumer.Tally {
    switch implementation {
    case .library:
        let numbers = Signal<Int, NoError> { send in
            for element in 0..<elements {
                await send.waitingForRoom(element)
                consumer.progress.sent.store(element + 1, ordering: .relaxed)
            }
        }
        return await consume(numbers.values(bufferingPolicy: .bounded(bound)), with: consumer).value
    case .librarySequence:
        let numbers = Signal(CountedElements(count: elements, progress: consumer.progress))
        return await consume(numbers.values(bufferingPolicy: .bounded(bound)), with: consumer).value
    case .channel:
        return await runChannel(elements: elements, consumer: consumer, bound: bound)
    case .librarySynchronousBounded, .librarySynchronousUnbounded:
        let numbers = synchronousProducer(elements: elements, progress: consumer.progress)
        let policy: SignalBufferingPolicy = implementation.endsEarly ? .bounded(bound) : .unbounded
        let values = numbers.values(bufferingPolicy: policy)
        let tally = await consume(values, with: consumer).value
        let expected: SignalValuesEndReason = implementation.endsEarly ? .producerCouldNotWait : .completed
        guard values.endReason == expected else {
            fatalError("flow-control: the loop ended with \(String(describing: values.endReason)), not \(expected)")
        }
        return tally
    case .asyncStream:
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let consuming = consume(stream, with: consumer)
        for element in 0..<elements {
            continuation.yield(element)
            consumer.progress.sent.store(element + 1, ordering: .relaxed)
        }
        continuation.finish()
        return await consuming.value
    }
}

/// A signal whose producer cannot wait: on subscription it starts a thread that calls `putNext` for
/// 0..<elements, then `putCompletion()`. Disposal does not stop the thread; what it sends afterwards
/// goes nowhere.
private func synchronousProducer(elements: Int, progress: Progress) -> Signal<Int, NoError> {
    return Signal { subscriber in
        let thread = Thread {
            for element in 0..<elements {
                subscriber.putNext(element)
                progress.sent.store(element + 1, ordering: .relaxed)
            }
            subscriber.putCompletion()
        }
        thread.start()
        return EmptyDisposable
    }
}

/// The channel's producer is the calling task: its source is not copyable, so it stays with the task
/// that made it rather than being moved into a closure.
private func runChannel(elements: Int, consumer: Consumer, bound: Int) async -> Consumer.Tally {
    var channelAndSource = MultiProducerSingleConsumerAsyncChannel.makeChannel(
        of: Int.self,
        backpressureStrategy: .watermark(low: bound / 2, high: bound)
    )
    let consuming = consume(channelAndSource.takeChannel().elements(), with: consumer)
    var source = channelAndSource.source
    do {
        for element in 0..<elements {
            try await source.send(element)
            consumer.progress.sent.store(element + 1, ordering: .relaxed)
        }
    } catch {
        // `send` throws only once the channel has finished, which nothing here does before the last
        // element: the run would be wrong, not slow.
        fatalError("flow-control: the channel finished while the producer was sending: \(error)")
    }
    source.finish()
    return await consuming.value
}

/// Starts the consumer: a task of its own iterating `sequence` with `for await`, the same loop for
/// every implementation.
private func consume<Sequence: AsyncSequence<Int, Never> & Sendable>(
    _ sequence: Sequence,
    with consumer: Consumer
) -> Task<Consumer.Tally, Never> {
    return Task {
        var tally = Consumer.Tally()
        for await element in sequence {
            consumer.take(element, into: &tally)
        }
        return tally
    }
}

/// 0..<count as an async sequence that never suspends, counting what has been pulled: for
/// `Signal(sequence)`, whose task pulls an element only when the loop has room and sends it at once,
/// what was pulled is what was sent (give or take the one element between the two).
private struct CountedElements: AsyncSequence, Sendable {
    let count: Int
    let progress: Progress

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let progress: Progress
        var next = 0

        mutating func next() async -> Int? {
            guard self.next < self.count else { return nil }
            defer { self.next += 1 }
            self.progress.sent.store(self.next + 1, ordering: .relaxed)
            return self.next
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(count: self.count, progress: self.progress)
    }
}
