import Dispatch
import OpenCombine
import OpenCombineDispatch
import SwiftSignalKit

/// W1: a generator pushes 1,000,000 Ints through `map` and `filter` into a summing subscriber.
func w1MapFilter() -> [Workload] {
    var workloads: [Workload] = []
    let count = million
    let name = "W1 map+filter per event"
    // The same pipeline, computed directly.
    let expected = (0..<count).lazy.map { $0 &* 3 }.filter { $0 & 1 == 0 }.reduce(0, &+)
    workloads.append(
        workload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let source = countingSignal(count)
                        let sum = Sum()
                        (source |> map { $0 &* 3 } |> filter { $0 & 1 == 0 }).start(next: { sum.value &+= $0 })
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .openCombine,
                    { _ in
                        let subject = PassthroughSubject<Int, Never>()
                        let sum = Sum()
                        let cancellable = subject.map { $0 &* 3 }.filter { $0 & 1 == 0 }.sink { sum.value &+= $0 }
                        for value in 0..<count { subject.send(value) }
                        subject.send(completion: .finished)
                        cancellable.cancel()
                        blackHole(sum.value)
                        checkResult(name, .openCombine, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .limit,
                    { _ in
                        // One stage, as the library runs `map`, `filter` and the callback in one subscriber.
                        let sum = Sum()
                        let stage = LimitStage { value in
                            let mapped = value &* 3
                            if mapped & 1 == 0 { sum.value &+= mapped }
                        }
                        for value in 0..<count { stage.push(value) }
                        blackHole(sum.value)
                        checkResult(name, .limit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .contractFloor,
                    { _ in
                        // One stage, as the library's one subscriber.
                        let sum = Sum()
                        let stage = ContractStage { value in
                            let mapped = value &* 3
                            if mapped & 1 == 0 { sum.value &+= mapped }
                        }
                        for value in 0..<count { stage.push(value) }
                        blackHole(sum.value)
                        checkResult(name, .contractFloor, expected: expected, actual: sum.value)
                    }
                ),
            ]
        ))
    return workloads
}

/// W2: build, start and dispose `single(1) |> map |> filter`.
func w2SubscriptionLifecycle() -> [Workload] {
    var workloads: [Workload] = []
    let name = "W2 build+start+dispose per subscription"
    // Each subscription delivers 1 + 1.
    let expected = 2 * thousand
    workloads.append(
        workload(
            name,
            operations: thousand,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let sum = Sum()
                        for _ in 0..<thousand {
                            let signal = Signal<Int, NoError>.single(1) |> map { $0 &+ 1 } |> filter { $0 > 0 }
                            signal.start(next: { sum.value &+= $0 }).dispose()
                        }
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .openCombine,
                    { (benchmark: any MeasurementWindow) in
                        let sum = Sum()
                        for _ in 0..<thousand {
                            Just(1).map { $0 &+ 1 }.filter { $0 > 0 }.sink { sum.value &+= $0 }.cancel()
                        }
                        blackHole(sum.value)
                        checkResult(name, .openCombine, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .limit,
                    { (benchmark: any MeasurementWindow) in
                        let sum = Sum()
                        // Per subscription: one stage (the library's one subscriber for `map |> filter`
                        // and the callback), given its one value, then closed.
                        for _ in 0..<thousand {
                            let stage = LimitStage { value in
                                let mapped = value &+ 1
                                if mapped > 0 { sum.value &+= mapped }
                            }
                            stage.push(1)
                            stage.close()
                        }
                        blackHole(sum.value)
                        checkResult(name, .limit, expected: expected, actual: sum.value)
                    }
                ),
            ]
        ))
    return workloads
}

/// W3: a `ValuePipe` delivering to 1, 10, 100 and 1,000 subscribers (per delivery), and subscribing then
/// disposing 10 to 10,000 subscribers in random order (per subscriber).
func w3ValuePipe() -> [Workload] {
    var workloads: [Workload] = []
    let deliveries = million
    for subscribers in [1, 10, 100, 1000] {
        let puts = deliveries / subscribers
        let name = "W3 delivery to \(subscribers) subscribers per delivery"
        // Every subscriber receives every value.
        let expected = subscribers * sumBelow(puts)
        workloads.append(
            workload(
                name,
                operations: million,
                [
                    (
                        .signalKit,
                        { (benchmark: any MeasurementWindow) in
                            let pipe = ValuePipe<Int>()
                            let sum = Sum()
                            let disposables = (0..<subscribers).map { _ in pipe.signal().start(next: { sum.value &+= $0 }) }
                            benchmark.startMeasurement()
                            for value in 0..<puts { pipe.putNext(value) }
                            benchmark.stopMeasurement()
                            disposables.forEach { $0.dispose() }
                            blackHole(sum.value)
                            checkResult(name, .signalKit, expected: expected, actual: sum.value)
                        }
                    ),
                    openCombineFanOut(name, subscribers: subscribers, sends: puts, expected: expected) {
                        OpenCombineSubject(PassthroughSubject())
                    },
                    stageFanOut(.limit, name, subscribers: subscribers, sends: puts, expected: expected, stage: LimitStage.init),
                    stageFanOut(.contractFloor, name, subscribers: subscribers, sends: puts, expected: expected, stage: ContractStage.init),
                ]
            ))
    }

    // The same fan-out through `share`: each subscriber has a queue of its own, which the share fills
    // under its lock and delivers outside it. It allocated 16 times per value for ten subscribers
    // (each queue's storage, freed whenever it emptied, the list of queues to deliver, the value the
    // replay dropped) before the allocation check had this workload.
    for subscribers in [10] {
        let puts = deliveries / subscribers
        let name = "W3 share(replay: .latest) delivery to \(subscribers) subscribers per delivery"
        // Every subscriber receives every value; nothing was put before they joined, so none is replayed.
        let expected = subscribers * sumBelow(puts)
        workloads.append(
            workload(
                name,
                operations: million,
                [
                    (
                        .signalKit,
                        { (benchmark: any MeasurementWindow) in
                            let pipe = ValuePipe<Int>()
                            let shared = pipe.signal() |> share(replay: .latest)
                            let sum = Sum()
                            let disposables = (0..<subscribers).map { _ in shared.start(next: { sum.value &+= $0 }) }
                            benchmark.startMeasurement()
                            for value in 0..<puts { pipe.putNext(value) }
                            benchmark.stopMeasurement()
                            disposables.forEach { $0.dispose() }
                            blackHole(sum.value)
                            checkResult(name, .signalKit, expected: expected, actual: sum.value)
                        }
                    ),
                    stageFanOut(.limit, name, subscribers: subscribers, sends: puts, expected: expected, stage: LimitStage.init),
                ]
            ))
    }

    let total = million
    for subscribers in [10, 100, 1000, 10_000] {
        let rounds = total / subscribers
        let order = shuffledIndices(subscribers)
        let name = "W3 churn of \(subscribers) subscribers per subscriber"
        // A churn delivers nothing, so each variant puts one value in its last round, before disposing
        // (every subscriber must receive it), and one after it (no subscriber may): one comparison per
        // round, none per subscriber.
        let expected = subscribers
        workloads.append(
            workload(
                name,
                operations: million,
                maxSeconds: 3,
                [
                    (
                        .signalKit,
                        { _ in
                            let pipe = ValuePipe<Int>()
                            var disposables: [Disposable] = []
                            disposables.reserveCapacity(subscribers)
                            let before = churnDeliveries.load(ordering: .relaxed)
                            for round in 1...rounds {
                                for _ in 0..<subscribers { disposables.append(pipe.signal().start(next: churnReceived)) }
                                if round == rounds { pipe.putNext(0) }
                                for index in order { disposables[index].dispose() }
                                disposables.removeAll(keepingCapacity: true)
                            }
                            pipe.putNext(0)
                            let received = churnDeliveries.load(ordering: .relaxed) - before
                            checkResult(name, .signalKit, expected: expected, actual: received)
                        }
                    ),
                    (
                        .openCombine,
                        { _ in
                            let subject = PassthroughSubject<Int, Never>()
                            var cancellables: [AnyCancellable] = []
                            cancellables.reserveCapacity(subscribers)
                            let before = churnDeliveries.load(ordering: .relaxed)
                            for round in 1...rounds {
                                for _ in 0..<subscribers { cancellables.append(subject.sink(receiveValue: churnReceived)) }
                                if round == rounds { subject.send(0) }
                                for index in order { cancellables[index].cancel() }
                                cancellables.removeAll(keepingCapacity: true)
                            }
                            subject.send(0)
                            let received = churnDeliveries.load(ordering: .relaxed) - before
                            checkResult(name, .openCombine, expected: expected, actual: received)
                        }
                    ),
                    (
                        .limit,
                        { _ in
                            let fanOut = LimitFanOut<LimitStage>()
                            var keys: [Int] = []
                            keys.reserveCapacity(subscribers)
                            let before = churnDeliveries.load(ordering: .relaxed)
                            for round in 1...rounds {
                                for _ in 0..<subscribers { keys.append(fanOut.add(LimitStage(churnReceived))) }
                                if round == rounds {
                                    fanOut.freeze()
                                    fanOut.push(0)
                                }
                                for index in order { fanOut.remove(keys[index]) }
                                keys.removeAll(keepingCapacity: true)
                            }
                            fanOut.freeze()
                            fanOut.push(0)
                            let received = churnDeliveries.load(ordering: .relaxed) - before
                            checkResult(name, .limit, expected: expected, actual: received)
                        }
                    ),
                ]
            ))
    }
    return workloads
}

/// W4: `combineLatest` of 2, 3 and 8 sources, and the array form with 8 and 32 (per emission).
/// OpenCombine 0.14 has no `combineLatest`, so there is no third column here.
func w4CombineLatest() -> [Workload] {
    var workloads: [Workload] = []
    let name2 = "W4 combineLatest of 2 per emission"
    let expected2 = combineLatestSum(arity: 2, adding: [0, 1])
    workloads.append(
        workload(
            name2,
            operations: million,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let pipes = (0..<2).map { _ in ValuePipe<Int>() }
                        let sum = Sum()
                        measureEmissions(benchmark, pipes: pipes) {
                            combineLatest(pipes[0].signal(), pipes[1].signal()).start(next: { sum.value &+= $0.0 &+ $0.1 })
                        }
                        blackHole(sum.value)
                        checkResult(name2, .signalKit, expected: expected2, actual: sum.value)
                    }
                ),
                combineLatestLimit(name2, arity: 2, copyingArray: false, expected: expected2),
            ]
        ))

    let name3 = "W4 combineLatest of 3 per emission"
    let expected3 = combineLatestSum(arity: 3, adding: [0, 2])
    workloads.append(
        workload(
            name3,
            operations: million,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let pipes = (0..<3).map { _ in ValuePipe<Int>() }
                        let sum = Sum()
                        measureEmissions(benchmark, pipes: pipes) {
                            combineLatest(pipes[0].signal(), pipes[1].signal(), pipes[2].signal())
                                .start(next: { sum.value &+= $0.0 &+ $0.2 })
                        }
                        blackHole(sum.value)
                        checkResult(name3, .signalKit, expected: expected3, actual: sum.value)
                    }
                ),
                combineLatestLimit(name3, arity: 3, copyingArray: false, expected: expected3),
            ]
        ))

    let name8 = "W4 combineLatest of 8 per emission"
    let expected8 = combineLatestSum(arity: 8, adding: [0, 7])
    workloads.append(
        workload(
            name8,
            operations: million,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let pipes = (0..<8).map { _ in ValuePipe<Int>() }
                        let s = pipes.map { $0.signal() }
                        let sum = Sum()
                        measureEmissions(benchmark, pipes: pipes) {
                            combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
                                .start(next: { sum.value &+= $0.0 &+ $0.7 })
                        }
                        blackHole(sum.value)
                        checkResult(name8, .signalKit, expected: expected8, actual: sum.value)
                    }
                ),
                combineLatestLimit(name8, arity: 8, copyingArray: false, expected: expected8),
            ]
        ))

    for arity in [8, 32] {
        let name = "W4 combineLatest array of \(arity) per emission"
        let expected = combineLatestSum(arity: arity, adding: [0])
        workloads.append(
            workload(
                name,
                operations: million,
                [
                    (
                        .signalKit,
                        { (benchmark: any MeasurementWindow) in
                            let pipes = (0..<arity).map { _ in ValuePipe<Int>() }
                            let sum = Sum()
                            measureEmissions(benchmark, pipes: pipes) {
                                combineLatest(pipes.map { $0.signal() }).start(next: { sum.value &+= $0[0] })
                            }
                            blackHole(sum.value)
                            checkResult(name, .signalKit, expected: expected, actual: sum.value)
                        }
                    ),
                    combineLatestLimit(name, arity: arity, copyingArray: true, expected: expected),
                ]
            ))
    }
    return workloads
}

/// W5: `mapToSignal` of each value to a single-value signal (per outer value).
func w5MapToSignal() -> [Workload] {
    var workloads: [Workload] = []
    let count = million
    let name = "W5 mapToSignal per outer value"
    // Each outer value comes back once, from its inner signal.
    let expected = sumBelow(count)
    workloads.append(
        workload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let source = countingSignal(count)
                        let sum = Sum()
                        (source |> mapToSignal { Signal<Int, NoError>.single($0) }).start(next: { sum.value &+= $0 })
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .openCombine,
                    { _ in
                        let subject = PassthroughSubject<Int, Never>()
                        let sum = Sum()
                        let cancellable = subject.flatMap(maxPublishers: .max(1)) { Just($0) }.sink { sum.value &+= $0 }
                        for value in 0..<count { subject.send(value) }
                        subject.send(completion: .finished)
                        cancellable.cancel()
                        blackHole(sum.value)
                        checkResult(name, .openCombine, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .limit,
                    { _ in
                        // Per outer value: the outer stage, a new inner source (a closure, as `single` makes),
                        // a new inner stage with its own flag, and one lock each to install and remove it.
                        let sum = Sum()
                        let sink = LimitStage { sum.value &+= $0 }
                        let registry = LimitFanOut<LimitStage>()
                        let outer = LimitStage { value in
                            let inner: (LimitStage) -> Void = { $0.push(value) }
                            let stage = LimitStage { sink.push($0) }
                            let key = registry.add(stage)
                            inner(stage)
                            registry.remove(key)
                        }
                        for value in 0..<count { outer.push(value) }
                        blackHole(sum.value)
                        checkResult(name, .limit, expected: expected, actual: sum.value)
                    }
                ),
            ]
        ))
    return workloads
}

/// W6: `ValuePromise.set` and `Promise.set(.single)` with 10 subscribers (per set).
func w6Promises() -> [Workload] {
    var workloads: [Workload] = []
    let subscribers = 10
    // Every subscriber receives every value set (and the initial 0, where there is one).
    let expected = subscribers * sumBelow(thousand)
    let valueName = "W6 ValuePromise.set to 10 subscribers per set"
    workloads.append(
        workload(
            valueName,
            operations: thousand,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let promise = ValuePromise<Int>(0)
                        let sum = Sum()
                        let disposables = (0..<subscribers).map { _ in promise.get().start(next: { sum.value &+= $0 }) }
                        benchmark.startMeasurement()
                        for value in 0..<thousand { promise.set(value) }
                        benchmark.stopMeasurement()
                        disposables.forEach { $0.dispose() }
                        blackHole(sum.value)
                        checkResult(valueName, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                openCombineFanOut(valueName, subscribers: subscribers, sends: thousand, expected: expected) {
                    OpenCombineSubject(CurrentValueSubject(0))
                },
                stageFanOut(.limit, valueName, subscribers: subscribers, sends: thousand, expected: expected, stage: LimitStage.init),
                stageFanOut(
                    .contractFloor,
                    valueName,
                    subscribers: subscribers,
                    sends: thousand,
                    expected: expected,
                    stage: ContractStage.init
                ),
            ]
        ))

    let promiseName = "W6 Promise.set(single) to 10 subscribers per set"
    workloads.append(
        workload(
            promiseName,
            operations: thousand,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        let promise = Promise<Int>()
                        let sum = Sum()
                        let disposables = (0..<subscribers).map { _ in promise.get().start(next: { sum.value &+= $0 }) }
                        benchmark.startMeasurement()
                        for value in 0..<thousand { promise.set(.single(value)) }
                        benchmark.stopMeasurement()
                        disposables.forEach { $0.dispose() }
                        blackHole(sum.value)
                        checkResult(promiseName, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .openCombine,
                    { (benchmark: any MeasurementWindow) in
                        let subject = CurrentValueSubject<Int, Never>(0)
                        let sum = Sum()
                        let cancellables = (0..<subscribers).map { _ in subject.sink { sum.value &+= $0 } }
                        var source: AnyCancellable?
                        benchmark.startMeasurement()
                        for value in 0..<thousand {
                            source?.cancel()
                            source = Just(value).sink { subject.send($0) }
                        }
                        benchmark.stopMeasurement()
                        cancellables.forEach { $0.cancel() }
                        blackHole(sum.value)
                        checkResult(promiseName, .openCombine, expected: expected, actual: sum.value)
                    }
                ),
                swappedSourceFanOut(
                    .limit, promiseName, subscribers: subscribers, sets: thousand, expected: expected, stage: LimitStage.init),
                swappedSourceFanOut(
                    .contractFloor,
                    promiseName,
                    subscribers: subscribers,
                    sets: thousand,
                    expected: expected,
                    stage: ContractStage.init
                ),
            ]
        ))
    return workloads
}

/// W7: `deliverOn(Queue())` of 1,000,000 values: wall time until the last one arrives (per value).
func w7DeliverOn() -> [Workload] {
    var workloads: [Workload] = []
    let count = million
    let name = "W7 deliverOn per value"
    let expected = sumBelow(count)
    workloads.append(
        workload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let queue = Queue()
                        let done = DispatchSemaphore(value: 0)
                        let sum = Sum()
                        let source = countingSignal(count)
                        (source |> deliverOn(queue)).start(next: { sum.value &+= $0 }, completed: { done.signal() })
                        done.wait()
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .openCombine,
                    { _ in
                        let queue = DispatchQueue(label: "W7")
                        let done = DispatchSemaphore(value: 0)
                        let sum = Sum()
                        let subject = PassthroughSubject<Int, Never>()
                        let cancellable = subject.receive(on: queue.ocombine)
                            .sink(receiveCompletion: { _ in done.signal() }, receiveValue: { sum.value &+= $0 })
                        for value in 0..<count { subject.send(value) }
                        subject.send(completion: .finished)
                        done.wait()
                        cancellable.cancel()
                        blackHole(sum.value)
                        checkResult(name, .openCombine, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .limit,
                    { _ in
                        // One stage before the hop, then one dispatch per value.
                        let queue = DispatchQueue(label: "W7")
                        let done = DispatchSemaphore(value: 0)
                        let sum = Sum()
                        let stage = LimitStage { value in queue.async { sum.value &+= value } }
                        for value in 0..<count { stage.push(value) }
                        queue.async { done.signal() }
                        done.wait()
                        blackHole(sum.value)
                        checkResult(name, .limit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .contractFloor,
                    { _ in
                        // The limit plus what the contract and `deliverOn` require: the stage before the
                        // hop and the subscriber after it keep the subscriber contract; each value first
                        // asks whether it is already on the queue (which would run it inline), and counts
                        // itself as pending in the queue, under a lock, until it has run, so that an event
                        // sent on the queue never overtakes it.
                        let queue = DispatchQueue(label: "W7")
                        let key = DispatchSpecificKey<LimitMutex>()
                        let marker = LimitMutex()
                        queue.setSpecific(key: key, value: marker)
                        let done = DispatchSemaphore(value: 0)
                        let sum = Sum()
                        let pending = PendingCount()
                        let sink = ContractStage { sum.value &+= $0 }
                        let stage = ContractStage { value in
                            if DispatchQueue.getSpecific(key: key) === marker && pending.isZero {
                                sink.push(value)
                            } else {
                                pending.enqueue(on: queue) { sink.push(value) }
                            }
                        }
                        for value in 0..<count { stage.push(value) }
                        queue.async { done.signal() }
                        done.wait()
                        blackHole(sum.value)
                        checkResult(name, .contractFloor, expected: expected, actual: sum.value)
                    }
                ),
            ]
        ))
    return workloads
}

/// W8: two threads pushing into one subscriber (per event).
func w8TwoThreads() -> [Workload] {
    var workloads: [Workload] = []
    let perThread = million / 2
    let name = "W8 two threads into one subscriber per event"
    // Each thread pushes 0..<perThread; the interleaving varies, the sum does not.
    let expected = 2 * sumBelow(perThread)
    workloads.append(
        workload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let slot = SubscriberSlot()
                        let sum = SharedSum()
                        let disposable = Signal<Int, NoError> { subscriber in
                            slot.subscriber = subscriber
                            return EmptyDisposable
                        }.start(next: { sum.add($0) })
                        let subscriber = slot.subscriber!
                        onThreads(2) { _ in
                            for value in 0..<perThread { subscriber.putNext(value) }
                        }
                        disposable.dispose()
                        blackHole(sum.value.load(ordering: .relaxed))
                        checkResult(name, .signalKit, expected: expected, actual: sum.value.load(ordering: .relaxed))
                    }
                ),
                (
                    .openCombine,
                    { _ in
                        let subject = PassthroughSubject<Int, Never>()
                        let sum = SharedSum()
                        let cancellable = subject.sink { sum.add($0) }
                        let shared = Unchecked(value: subject)
                        onThreads(2) { _ in
                            for value in 0..<perThread { shared.value.send(value) }
                        }
                        cancellable.cancel()
                        blackHole(sum.value.load(ordering: .relaxed))
                        checkResult(name, .openCombine, expected: expected, actual: sum.value.load(ordering: .relaxed))
                    }
                ),
                (
                    .limit,
                    { _ in
                        let sum = SharedSum()
                        let stage = LimitStage { sum.add($0) }
                        onThreads(2) { _ in
                            for value in 0..<perThread { stage.push(value) }
                        }
                        blackHole(sum.value.load(ordering: .relaxed))
                        checkResult(name, .limit, expected: expected, actual: sum.value.load(ordering: .relaxed))
                    }
                ),
                (
                    .contractFloor,
                    { _ in
                        let sum = SharedSum()
                        let stage = ContractStage { sum.add($0) }
                        onThreads(2) { _ in
                            for value in 0..<perThread { stage.push(value) }
                        }
                        blackHole(sum.value.load(ordering: .relaxed))
                        checkResult(name, .contractFloor, expected: expected, actual: sum.value.load(ordering: .relaxed))
                    }
                ),
            ]
        ))
    return workloads
}

/// The limit for any arity: a fan-out and a stage per source, one combining mutex, a sink stage.
private func combineLatestLimit(
    _ name: String,
    arity: Int,
    copyingArray: Bool,
    expected: Int
) -> (Variant, @Sendable (any MeasurementWindow) -> Void) {
    return (
        .limit,
        { (benchmark: any MeasurementWindow) in
            let sum = Sum()
            let sink = LimitStage { sum.value &+= $0 }
            let arraySink = LimitStageOf<[Int]> { sum.value &+= $0[0] }
            let combiner = LimitCombiner(arity: arity) { sink.push($0[0] &+ $0[arity - 1]) }
            let sources = (0..<arity).map { index in
                let fanOut = LimitFanOut<LimitStage>()
                _ = fanOut.add(
                    LimitStage { value in
                        if copyingArray {
                            combiner.pushCopyingArray(value, at: index) { arraySink.push($0) }
                        } else {
                            combiner.push(value, at: index)
                        }
                    }
                )
                fanOut.freeze()
                return fanOut
            }
            for index in 0..<arity { sources[index].push(0) }
            benchmark.startMeasurement()
            for value in 0..<million { sources[value % arity].push(value) }
            benchmark.stopMeasurement()
            blackHole(sum.value)
            checkResult(name, .limit, expected: expected, actual: sum.value)
        }
    )
}

/// What a W4 subscriber adds up: every source is primed with 0 (one emission of zeros), then value `v` goes
/// to source `v % arity`, and each emission adds the latest values of the sources in `adding`.
private func combineLatestSum(arity: Int, adding sources: [Int]) -> Int {
    var latest = Array(repeating: 0, count: arity)
    var sum = 0
    for value in 0..<million {
        latest[value % arity] = value
        for source in sources { sum &+= latest[source] }
    }
    return sum
}

/// Runs a combined signal over `arity` pipes: primes every pipe, then measures the million.
private func measureEmissions(_ benchmark: any MeasurementWindow, pipes: [ValuePipe<Int>], start: () -> Disposable) {
    let disposable = start()
    for pipe in pipes { pipe.putNext(0) }
    benchmark.startMeasurement()
    for value in 0..<million { pipes[value % pipes.count].putNext(value) }
    benchmark.stopMeasurement()
    disposable.dispose()
}

/// The core library's workloads, W1 to W8.
func coreWorkloads() -> [Workload] {
    return w1MapFilter() + w2SubscriptionLifecycle() + w3ValuePipe() + w4CombineLatest() + w5MapToSignal() + w6Promises() + w7DeliverOn()
        + w8TwoThreads()
}

/// A generator that pushes 0..<count synchronously, then completes.
private func countingSignal(_ count: Int) -> Signal<Int, NoError> {
    return Signal { subscriber in
        for value in 0..<count { subscriber.putNext(value) }
        subscriber.putCompletion()
        return EmptyDisposable
    }
}

/// An OpenCombine subject of Ints seen through its two operations, so one body serves both kinds (at the
/// cost of one indirect call per send, about a nanosecond against OpenCombine's 120 or more).
private struct OpenCombineSubject {
    let sink: (@escaping (Int) -> Void) -> AnyCancellable
    let send: (Int) -> Void

    init<S: Subject>(_ subject: S) where S.Output == Int, S.Failure == Never {
        self.sink = { subject.sink(receiveValue: $0) }
        self.send = { subject.send($0) }
    }
}

/// OpenCombine's multicast: `subscribers` summing sinks on a subject, then `sends` values (measured).
private func openCombineFanOut(
    _ name: String,
    subscribers: Int,
    sends: Int,
    expected: Int,
    subject makeSubject: @escaping @Sendable () -> OpenCombineSubject
) -> (Variant, @Sendable (any MeasurementWindow) -> Void) {
    return (
        .openCombine,
        { benchmark in
            let subject = makeSubject()
            let sum = Sum()
            let cancellables = (0..<subscribers).map { _ in subject.sink { sum.value &+= $0 } }
            benchmark.startMeasurement()
            for value in 0..<sends { subject.send(value) }
            benchmark.stopMeasurement()
            cancellables.forEach { $0.cancel() }
            blackHole(sum.value)
            checkResult(name, .openCombine, expected: expected, actual: sum.value)
        }
    )
}

/// A frozen registry of `subscribers` stages, each adding what it receives to `sum`.
private func summingFanOut<Stage: PushStage<Int>>(
    _ subscribers: Int,
    into sum: Sum,
    stage makeStage: (@escaping (Int) -> Void) -> Stage
) -> LimitFanOut<Stage> {
    let fanOut = LimitFanOut<Stage>()
    for _ in 0..<subscribers { _ = fanOut.add(makeStage { sum.value &+= $0 }) }
    fanOut.freeze()
    return fanOut
}

/// A fan-out floor: the limit's registry delivering `sends` values to `subscribers` stages, which are
/// `LimitStage`s for the limit and `ContractStage`s for the contract floor.
private func stageFanOut<Stage: PushStage<Int>>(
    _ variant: Variant,
    _ name: String,
    subscribers: Int,
    sends: Int,
    expected: Int,
    stage makeStage: @escaping @Sendable (@escaping (Int) -> Void) -> Stage
) -> (Variant, @Sendable (any MeasurementWindow) -> Void) {
    return (
        variant,
        { benchmark in
            let sum = Sum()
            let fanOut = summingFanOut(subscribers, into: sum, stage: makeStage)
            benchmark.startMeasurement()
            for value in 0..<sends { fanOut.push(value) }
            benchmark.stopMeasurement()
            blackHole(sum.value)
            checkResult(name, variant, expected: expected, actual: sum.value)
        }
    )
}

/// The floor of `Promise.set(.single(x))`: per set, a new source (a closure), a stage subscribed to it,
/// one lock to swap the current source, and the fan-out of the value to `subscribers` stages.
private func swappedSourceFanOut<Stage: PushStage<Int>>(
    _ variant: Variant,
    _ name: String,
    subscribers: Int,
    sets: Int,
    expected: Int,
    stage makeStage: @escaping @Sendable (@escaping (Int) -> Void) -> Stage
) -> (Variant, @Sendable (any MeasurementWindow) -> Void) {
    return (
        variant,
        { benchmark in
            let sum = Sum()
            let fanOut = summingFanOut(subscribers, into: sum, stage: makeStage)
            let current = LimitMutex()
            var currentStage: Stage?
            benchmark.startMeasurement()
            for value in 0..<sets {
                let source: (Stage) -> Void = { $0.push(value) }
                let stage = makeStage { fanOut.push($0) }
                current.lock()
                let previous = currentStage
                currentStage = stage
                current.unlock()
                previous?.close()
                source(stage)
            }
            benchmark.stopMeasurement()
            blackHole(sum.value)
            checkResult(name, variant, expected: expected, actual: sum.value)
        }
    )
}

/// The count of one subscription's events waiting in a queue, as `deliverOn` keeps it: incremented with
/// the enqueueing under one lock, decremented after each event ran.
final class PendingCount: @unchecked Sendable {
    // Safe: `count` is read and written only under `mutex`.
    private let mutex = LimitMutex()
    private var count = 0

    var isZero: Bool {
        self.mutex.lock()
        defer { self.mutex.unlock() }
        return self.count == 0
    }

    func enqueue(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        self.mutex.lock()
        self.count += 1
        queue.async {
            work()
            self.mutex.lock()
            self.count -= 1
            self.mutex.unlock()
        }
        self.mutex.unlock()
    }
}
