// Runs one workload variant once, outside package-benchmark, so that valgrind (callgrind, memcheck) can
// look at it alone:
//
//     swift build -c release --product profile
//     valgrind --tool=callgrind .build/release/profile "W1 map+filter per event" SignalKit [repetitions]
import Foundation
import Workloads

struct Unmeasured: MeasurementWindow {
    func startMeasurement() {}
    func stopMeasurement() {}
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
switch body {
case .sync(let run):
    for _ in 0..<repetitions { run(Unmeasured()) }
case .async(let run):
    // Not a top-level `await`: that hands the main thread to `dispatch_main`, which valgrind cannot
    // follow (it crashes when the main thread parks). The main thread waits on a semaphore instead, and the
    // task is detached: a plain `Task` here would inherit the main actor, which that wait blocks.
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        for _ in 0..<repetitions { await run(Unmeasured()) }
        done.signal()
    }
    done.wait()
}
