// What the memory suite and the soak check read: the process's resident set and the bytes malloc has handed out.

import Foundation
import MemoryShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One reading of the process's memory.
public struct MemoryReading: Sendable {
    /// Resident set size in bytes (pages the process has touched and still holds).
    public var resident: Int
    /// Bytes in chunks malloc has handed out and not taken back, with each chunk's header and
    /// rounding: what the live objects cost the heap, whatever pages they landed on.
    public var heap: Int

    /// Reads the process now, after handing freed memory back to the system where malloc can, so that
    /// a reading before a measurement is not inflated by garbage of the set-up.
    public static func now() -> MemoryReading {
        memory_shims_trim()
        return MemoryReading(resident: residentBytes(), heap: Int(memory_shims_heap_in_use()))
    }

    private static func residentBytes() -> Int {
        #if os(Linux)
            // /proc/self/statm: sizes in pages; the second field is the resident set.
            guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = statm.split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
            var usage = rusage()
            getrusage(RUSAGE_SELF, &usage)
            return Int(usage.ru_maxrss)
        #endif
    }
}
