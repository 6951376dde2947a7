import Dispatch
import Foundation
import SwiftSignalKit
import Testing

/// `deliverOn(queue)` keeps the order in which events were sent, also when a later event is sent on
/// the queue itself while an earlier one from another thread is still waiting there.
@Suite struct DeliveryOrderRealUseTests {
    @Test func aCompletionSentOnTheQueueDoesNotOvertakeAValueSentFromAnotherThread() async {
        for _ in 0..<50 {
            let queue = Queue(name: "delivery")
            let subscriberBox = Atomic<Subscriber<Int, NoError>?>(value: nil)
            let source = Signal<Int, NoError> { subscriber in
                _ = subscriberBox.swap(subscriber)
                return EmptyDisposable
            }
            let events = Log<String>()
            let ended = DispatchSemaphore(value: 0)
            let subscription = (source |> deliverOn(queue)).start(
                next: { events.append("next \($0)") },
                completed: {
                    events.append("completed")
                    ended.signal()
                })
            let valueSent = DispatchSemaphore(value: 0)
            // The queue is busy in this block while another thread sends a value, which therefore waits
            // in the queue; then the completion is sent from the queue itself.
            queue.async {
                Thread {
                    subscriberBox.with { $0 }?.putNext(1)
                    valueSent.signal()
                }.start()
                _ = blockingWait(valueSent, seconds: 2 * hangLimit)
                subscriberBox.with { $0 }?.putCompletion()
            }
            #expect(await wait(ended))
            #expect(events.entries == ["next 1", "completed"])
            subscription.dispose()
        }
    }

    /// Events sent on the queue with nothing pending still run inline, without a hop.
    @Test func anEventSentOnTheQueueWithNothingPendingRunsInline() {
        let queue = Queue(name: "inline")
        let pipe = ValuePipe<Int>()
        let events = Log<Int>()
        let subscription = (pipe.signal() |> deliverOn(queue)).start(next: { events.append($0) })
        queue.sync {
            pipe.putNext(1)
            #expect(events.entries == [1])
        }
        subscription.dispose()
    }
}
