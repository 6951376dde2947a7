import Dispatch
import Foundation

/// The cancellation flag of a ``ThreadPoolTask``.
public final class ThreadPoolTaskState: Sendable {
    /// Set to true when the task is cancelled; long tasks should check it.
    public let cancelled = Atomic<Bool>(value: false)

    /// Creates a state that is not cancelled.
    public init() {}
}

/// A unit of work for a ``ThreadPool``.
public final class ThreadPoolTask: Sendable {
    private let state = ThreadPoolTaskState()
    private let action: @Sendable (ThreadPoolTaskState) -> Void

    /// Creates a task.
    ///
    /// - Parameter action: The work; receives the task's state so it can stop early when cancelled.
    @preconcurrency public init(_ action: @escaping @Sendable (ThreadPoolTaskState) -> Void) {
        self.action = action
    }

    /// Runs the action on the calling thread, unless the task has been cancelled. The pool calls it on
    /// one of its threads; call it yourself to run a task inline (public, as in the original library).
    public func execute() {
        if !self.state.cancelled.with({ $0 }) {
            self.action(self.state)
        }
    }

    /// Cancels the task: it will not start, and a running action can see ``ThreadPoolTaskState/cancelled``.
    public func cancel() {
        self.state.cancelled.swap(true)
    }
}

/// A serial lane of a ``ThreadPool``: its tasks run one at a time, in the order they were added.
public final class ThreadPoolQueue: Equatable, Sendable {
    private weak let core: ThreadPoolCore?
    /// Unique for the pool's lifetime (an object's address could be reused while its tasks still wait).
    private let id: UInt64

    /// Creates a lane of `threadPool`.
    ///
    /// - Parameter threadPool: The pool whose threads run the lane's tasks.
    public init(threadPool: ThreadPool) {
        self.core = threadPool.core
        self.id = threadPool.core.makeLaneID()
    }

    /// Adds a task to the lane. Does nothing if the pool has been released.
    ///
    /// - Parameter task: The task.
    public func addTask(_ task: ThreadPoolTask) {
        if TimelineExecutor.refusesDeparture("ThreadPool.addTask") { return }
        self.core?.enqueue(task, on: self.id)
    }

    /// Lanes are equal when they are the same object.
    public static func == (lhs: ThreadPoolQueue, rhs: ThreadPoolQueue) -> Bool {
        return lhs === rhs
    }
}

/// A fixed set of threads that run ``ThreadPoolTask``s.
///
/// Tasks added with ``addTask(_:)`` may run in parallel; tasks added to one ``ThreadPoolQueue`` run one
/// at a time, in order.
///
/// ```swift
/// let pool = ThreadPool(threadCount: 4, threadPriority: 0.5)
/// let lane = pool.nextQueue()
/// lane.addTask(ThreadPoolTask { state in
///     if !state.cancelled.with({ $0 }) { print("work") }
/// })
/// ```
///
/// When the pool is released its threads finish the task they are running and exit; tasks not yet
/// started are dropped.
public final class ThreadPool: Sendable {
    let core: ThreadPoolCore

    /// Starts `threadCount` threads.
    ///
    /// - Parameters:
    ///   - threadCount: The number of threads; must be positive.
    ///   - threadPriority: A priority from 0 to 1, passed to `Thread.threadPriority` on Apple platforms;
    ///     ignored on Linux, where Foundation has no thread priorities.
    public convenience init(threadCount: Int, threadPriority: Double) {
        self.init(threadCount: threadCount, threadPriority: threadPriority, onThreadExit: nil)
    }

    /// - Parameter onThreadExit: Runs on each pool thread just before it exits (for tests).
    init(threadCount: Int, threadPriority: Double, onThreadExit: (@Sendable () -> Void)?) {
        if threadCount <= 0 { misuse("ThreadPool(threadCount:) needs at least one thread, got \(threadCount)") }
        self.core = ThreadPoolCore(threadCount: threadCount, onThreadExit: onThreadExit)
        for index in 0..<threadCount {
            let core = self.core
            let thread = Thread {
                core.runWorker()
            }
            thread.name = "SwiftSignalKit.ThreadPool.\(index)"
            #if canImport(Darwin)
                thread.threadPriority = threadPriority
            #endif
            thread.start()
        }
    }

    deinit {
        self.core.stop()
    }

    /// Runs `task` on some thread of the pool, in parallel with other tasks.
    ///
    /// - Parameter task: The task.
    public func addTask(_ task: ThreadPoolTask) {
        self.nextQueue().addTask(task)
    }

    /// Makes a new serial lane.
    ///
    /// - Returns: A lane whose tasks run one at a time, in order.
    public func nextQueue() -> ThreadPoolQueue {
        return ThreadPoolQueue(threadPool: self)
    }

    /// Whether the calling thread is one of this pool's threads.
    ///
    /// - Returns: true on a pool thread.
    public func isCurrentThreadInPool() -> Bool {
        return ThreadPoolCore.current() === self.core
    }
}

/// The state the pool's threads share; it outlives the `ThreadPool` until the threads exit.
final class ThreadPoolCore: Sendable {
    private struct LaneState: Sendable {
        /// Taken entries are set to nil and skipped with `head`, so taking a task is O(1); they are dropped
        /// once they are most of the array, so a lane that never empties does not keep a slot for every
        /// task it ever ran.
        private var tasks: [ThreadPoolTask?] = []
        private var head = 0
        var isScheduled = false

        var isEmpty: Bool { self.head == self.tasks.count }

        mutating func append(_ task: ThreadPoolTask) {
            self.tasks.append(task)
        }

        mutating func takeFirst() -> ThreadPoolTask {
            let task = self.tasks[self.head]!
            self.tasks[self.head] = nil
            self.head += 1
            if self.head == self.tasks.count {
                self.tasks.removeAll(keepingCapacity: true)
                self.head = 0
            } else if self.head > 64 && self.head * 2 > self.tasks.count {
                self.tasks.removeFirst(self.head)
                self.head = 0
            }
            return task
        }
    }

    private struct State: Sendable {
        var lanes: [UInt64: LaneState] = [:]
        var ready: [UInt64] = []
        var nextLaneID: UInt64 = 0
        var readyHead = 0
        var isStopped = false
    }

    private let state = LockedState<State>(State())
    private let wakeUps = DispatchSemaphore(value: 0)
    private let onThreadExit: (@Sendable () -> Void)?
    private let threadCount: Int

    init(threadCount: Int, onThreadExit: (@Sendable () -> Void)?) {
        self.threadCount = threadCount
        self.onThreadExit = onThreadExit
    }

    /// The pool whose worker the calling thread is.
    private static let currentSlot = ThreadSpecificSlot()

    static func current() -> ThreadPoolCore? {
        guard let pointer = Self.currentSlot.value else { return nil }
        return Unmanaged<ThreadPoolCore>.fromOpaque(pointer).takeUnretainedValue()
    }

    func makeLaneID() -> UInt64 {
        return self.state.withLock { state in
            state.nextLaneID += 1
            return state.nextLaneID
        }
    }

    func enqueue(_ task: ThreadPoolTask, on lane: UInt64) {
        let wake = self.state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            // In place: a copy of the lane out of the dictionary and back copied its whole queue, so a
            // burst onto a busy lane cost time quadratic in its length (100,000 tasks: 30 s).
            let wake = Self.append(task, to: &state.lanes[lane, default: LaneState()])
            if wake {
                state.ready.append(lane)
            }
            return wake
        }
        if wake {
            self.wakeUps.signal()
        }
    }

    /// Appends `task` to `lane` and marks it scheduled; returns whether it was not (a worker must be woken).
    private static func append(_ task: ThreadPoolTask, to lane: inout LaneState) -> Bool {
        lane.append(task)
        let wake = !lane.isScheduled
        lane.isScheduled = true
        return wake
    }

    func stop() {
        let dropped = self.state.withLock { state -> [UInt64: LaneState] in
            state.isStopped = true
            let lanes = state.lanes
            state.lanes = [:]
            state.ready = []
            state.readyHead = 0
            return lanes
        }
        withExtendedLifetime(dropped) {}
        for _ in 0..<self.threadCount {
            self.wakeUps.signal()
        }
    }

    /// The loop each pool thread runs until the pool stops.
    func runWorker() {
        Self.currentSlot.set(Unmanaged.passUnretained(self).toOpaque())
        while true {
            self.wakeUps.wait()
            let next = self.state.withLock { state -> (UInt64, ThreadPoolTask)?? in
                if state.isStopped { return .some(nil) }
                guard state.readyHead < state.ready.count else { return nil }
                let lane = state.ready[state.readyHead]
                state.readyHead += 1
                if state.readyHead > 64 && state.readyHead * 2 > state.ready.count {
                    state.ready.removeFirst(state.readyHead)
                    state.readyHead = 0
                }
                let task = state.lanes[lane]!.takeFirst()
                return (lane, task)
            }
            guard let next else { continue }
            guard let (lane, task) = next else { break }
            task.execute()
            let wake = self.state.withLock { state -> Bool in
                guard !state.isStopped, var laneState = state.lanes[lane] else { return false }
                if laneState.isEmpty {
                    state.lanes[lane] = nil
                    return false
                }
                laneState.isScheduled = true
                state.lanes[lane] = laneState
                state.ready.append(lane)
                return true
            }
            if wake {
                self.wakeUps.signal()
            }
        }
        Self.currentSlot.set(nil)
        self.onThreadExit?()
    }
}
