// The process's resident memory: now, and the most it has held since it started. Each run of
// `flow-control` is its own process (Scripts/flow-control.py starts one per run), so the peak is that
// of one implementation and one consumer, not of whatever ran before it in the same process.

import Foundation

enum ResidentMemory {
    /// The largest resident set the process has had so far, in bytes.
    static func peak() -> Int {
        #if os(Linux)
            return statusField("VmHWM") ?? maxRSS()
        #else
            return maxRSS()
        #endif
    }

    /// The resident set now, in bytes; nil where /proc is missing.
    static func current() -> Int? {
        #if os(Linux)
            return statusField("VmRSS")
        #else
            return nil
        #endif
    }

    /// `getrusage`'s maximum resident set: the same figure as `VmHWM` where both exist.
    private static func maxRSS() -> Int {
        var usage = rusage()
        #if os(Linux)
            guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
            return Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #else
            guard getrusage(RUSAGE_SELF, &usage) == 0 else { return 0 }
            return Int(usage.ru_maxrss)  // bytes on Darwin
        #endif
    }

    /// A field of /proc/self/status given in kB ("VmHWM:\t   12345 kB"), in bytes.
    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }
}
