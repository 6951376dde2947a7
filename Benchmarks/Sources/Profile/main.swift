// Runs one workload variant once, outside package-benchmark, so that valgrind (callgrind, memcheck) can
// look at it alone:
//
//     swift build -c release --product profile
//     valgrind --tool=callgrind .build/release/profile "W1 map+filter per event" SignalKit [repetitions]
//
// With `SSK_COUNT_ALLOCATIONS` set, and Scripts/allocation-counter.c preloaded (Scripts/allocations.py
// does both), it also prints the allocations of each repetition's measured window, the part of the body
// between its `startMeasurement()` and `stopMeasurement()` (the whole body when it calls neither), as
// package-benchmark measures them.
import Foundation
import Workloads

struct Unmeasured: MeasurementWindow {
    func startMeasurement() {}
    func stopMeasurement() {}
}

/// The allocation counter that Scripts/allocation-counter.c exports, when it is preloaded.
let allocationCount: (@convention(c) () -> UInt)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "ssk_allocation_count")
    .map { unsafeBitCast($0, to: (@convention(c) () -> UInt).self) }

/// One repetition's measured window, read from the allocation counter. A body calls its methods on one
/// thread at a time, and the count is read after the body has returned.
final class CountedWindow: MeasurementWindow, @unchecked Sendable {
    // Safe: a workload body calls `startMeasurement` and `stopMeasurement` in order on its own thread
    // (or task), and `allocations` is read after the body returned, which orders it after both.
    private let read: @convention(c) () -> UInt
    private var start: UInt
    private var stop: UInt?

    init(read: @escaping @convention(c) () -> UInt) {
        self.read = read
        self.start = read()
    }

    func startMeasurement() { self.start = self.read() }
    func stopMeasurement() { self.stop = self.read() }

    /// The window's allocations: up to `stopMeasurement()`, or up to now when the body did not call it.
    var allocations: UInt { (self.stop ?? self.read()) - self.start }
}

let arguments = CommandLine.arguments.dropFirst()
guard (2...3).contains(arguments.count), let variant = Variant(rawValue: arguments[arguments.startIndex + 1]),
    let repetitions = Int(arguments.count == 3 ? arguments.last! : "1")
else {
    print("usage: profile <workload name> <variant> [repetitions]")
    print("workloads:")
    for workload in allWorkloads {
        print("  \(workload.name): \(workload.variants.map(\.variant.rawValue).joined(separator: ", "))")
    }
    exit(2)
}
guard let workload = allWorkloads.first(where: { $0.name == arguments.first! }),
    let body = workload.variants.first(where: { $0.variant == variant })?.body
else {
    print("no workload \(arguments.first!) with variant \(variant.rawValue)")
    exit(2)
}
let counting = ProcessInfo.processInfo.environment["SSK_COUNT_ALLOCATIONS"] != nil
if counting && allocationCount == nil {
    print("SSK_COUNT_ALLOCATIONS is set, but no allocation counter is loaded: run Scripts/allocations.py")
    exit(2)
}

/// The counter to read for each repetition's window, when counting; nil leaves the windows unmeasured.
let counter = counting ? allocationCount : nil
let operations = workload.operations

/// A window for one repetition: counted, or one that does nothing.
func window(_ counter: (@convention(c) () -> UInt)?) -> any MeasurementWindow {
    guard let counter else { return Unmeasured() }
    return CountedWindow(read: counter)
}

/// Prints what a counted window saw, one line per repetition.
func report(_ window: any MeasurementWindow, operations: Int) {
    if let counted = window as? CountedWindow {
        print("allocations \(counted.allocations) operations \(operations)")
    }
}

switch body {
case .sync(let run):
    for _ in 0..<repetitions {
        let measured = window(counter)
        run(measured)
        report(measured, operations: operations)
    }
case .async(let run):
    // Not a top-level `await`: that hands the main thread to `dispatch_main`, which valgrind cannot
    // follow (it crashes when the main thread parks). The main thread waits on a semaphore instead, and the
    // task is detached: a plain `Task` here would inherit the main actor, which that wait blocks.
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        for _ in 0..<repetitions {
            let measured = window(counter)
            await run(measured)
            report(measured, operations: operations)
        }
        done.signal()
    }
    done.wait()
}
