// The standard library's way to the async shapes, for comparison.

final class ForAwaitAsyncStream: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let continuations: Slots<AsyncStream<Int>.Continuation>
    var tasks: Handles<Task<Void, Never>>

    init(count: Int) {
        self.count = count
        self.continuations = Slots(count: count)
        self.tasks = Handles(count: count)
    }

    func subscribe() async {
        let (sink, continuations) = (self.sink, self.continuations)
        for index in 0..<self.count {
            self.tasks[index] = Task.detached {
                for await value in AsyncStream<Int>(bufferingPolicy: .unbounded, { continuations.append($0) }) {
                    sink.receive(value)
                }
            }
        }
        await waitUntil { self.continuations.count == self.count }
    }

    func check() async -> String? {
        self.continuations.forEach { $0.yield(1) }
        await waitUntil { self.sink.count >= self.count }
        return self.sink.expect(self.count, "values iterated")
    }

    func end() async {
        for continuation in self.continuations.takeAll() { continuation.finish() }
        for task in self.tasks.all { await task.value }
        self.tasks.endAll { _ in }
    }
}
