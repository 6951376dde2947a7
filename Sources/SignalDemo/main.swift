// A short tour of SwiftSignalKit: cold signals, operators, promises and queues, then the async bridges.
import Dispatch
import SwiftSignalKit

func section(_ title: String) {
    print("\n== \(title)")
}

section("A cold signal runs its generator on every start")
let numbers = Signal<Int, NoError> { subscriber in
    for value in 1...5 {
        subscriber.putNext(value)
    }
    subscriber.putCompletion()
    return EmptyDisposable
}
_ = (numbers |> filter { $0 % 2 == 1 } |> map { $0 * 10 }).start(
    next: { value in
        print("odd x10:", value)
    },
    completed: {
        print("completed")
    })

section("combineLatest and distinctUntilChanged")
let name = ValuePromise("ada", ignoreRepeated: true)
let unread = ValuePromise(0)
let header = combineLatest(name.get(), unread.get()) |> map { name, count in "\(name) (\(count) unread)" }
let headerDisposable = (header |> distinctUntilChanged).start(next: { print("header:", $0) })
unread.set(3)
name.set("ada")  // repeated: ignored
name.set("grace")
headerDisposable.dispose()

section("Promise replays its latest value")
let profile = Promise<String>()
profile.set(.single("profile v1"))
let profileDisposable = profile.get().start(next: { print("subscriber saw:", $0) })
profile.set(.single("profile v2"))
profileDisposable.dispose()

section("mapToSignal follows only the latest inner signal")
let queries = ValuePipe<String>()
let results =
    queries.signal()
    |> mapToSignal { query in
        Signal<String, NoError>.single("results for \(query)")
    }
let resultsDisposable = results.start(next: { print($0) })
queries.putNext("swift")
queries.putNext("signals")
resultsDisposable.dispose()

section("deliverOn a Queue")
let worker = Queue(name: "demo.worker")
let done = DispatchSemaphore(value: 0)
_ = (numbers |> reduceLeft(value: 0, f: +) |> deliverOn(worker)).start(
    next: { sum in
        print("sum on worker queue:", sum, "isCurrent:", worker.isCurrent())
    },
    completed: {
        done.signal()
    })
done.wait()

section("delay postpones the subscription")
let delayed = DispatchSemaphore(value: 0)
_ = (Signal<String, NoError>.single("late hello") |> delay(for: .milliseconds(50), queue: worker)).start(
    next: { print($0) },
    completed: {
        delayed.signal()
    })
delayed.wait()

// The async part runs in a detached task while this (main) thread waits for it.
let asyncDone = DispatchSemaphore(value: 0)
Task.detached {
    await asyncTour()
    asyncDone.signal()
}
asyncDone.wait()
print("\ndone")
