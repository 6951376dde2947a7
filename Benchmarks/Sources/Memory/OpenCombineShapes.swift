// OpenCombine's side of the shapes it has an equivalent for. OpenCombine 0.14 has no
// `combineLatest`, no `values` and no actors on a queue.

import OpenCombine

final class HotMapOpenCombine: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let subject = PassthroughSubject<Int, Never>()
    var held: Handles<AnyCancellable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        let mapped = self.subject.map { $0 + 1 }
        for index in 0..<self.count {
            self.held[index] = mapped.sink { sink.receive($0) }
        }
    }

    func check() async -> String? {
        self.subject.send(1)
        return self.sink.expect(self.count, "values through map")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}

final class PromiseOpenCombine: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var subjects: Handles<CurrentValueSubject<Int, Never>>
    var held: Handles<AnyCancellable>

    init(count: Int) {
        self.count = count
        self.subjects = Handles(count: count)
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            let subject = CurrentValueSubject<Int, Never>(0)
            self.subjects[index] = subject
            self.held[index] = subject.sink { sink.receive($0) }
        }
    }

    func check() async -> String? {
        for subject in self.subjects.all { subject.send(1) }
        return self.sink.expect(2 * self.count, "the initial value and one send per subject")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
        self.subjects.endAll { _ in }
    }
}

final class IdleChainOpenCombine: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var held: Handles<AnyCancellable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        let chain = Empty<Int, Never>(completeImmediately: false).map { $0 + 1 }.filter { $0 > 0 }
        for index in 0..<self.count {
            self.held[index] = chain.sink { sink.receive($0) }
        }
    }

    func check() async -> String? {
        return self.sink.expect(0, "values from Empty(completeImmediately: false)")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}

/// A fresh `subject.map` for each subscriber.
final class HotMapPerSubscriberOpenCombine: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let subject = PassthroughSubject<Int, Never>()
    var held: Handles<AnyCancellable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = self.subject.map { $0 + 1 }.sink { sink.receive($0) }
        }
    }

    func check() async -> String? {
        self.subject.send(1)
        return self.sink.expect(self.count, "values through map")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}

/// A fresh `Empty(completeImmediately: false).map.filter` for each subscription.
final class IdleChainPerSubscriptionOpenCombine: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var held: Handles<AnyCancellable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            let chain = Empty<Int, Never>(completeImmediately: false).map { $0 + 1 }.filter { $0 > 0 }
            self.held[index] = chain.sink { sink.receive($0) }
        }
    }

    func check() async -> String? {
        return self.sink.expect(0, "values from Empty(completeImmediately: false)")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}
