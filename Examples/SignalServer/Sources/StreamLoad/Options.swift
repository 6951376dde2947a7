import Foundation

/// What the run does; from `--name value` arguments.
struct Options {
    /// The base URL of each server instance; clients and publishers are spread over them.
    var urls = ["http://127.0.0.1:8080"]
    /// The process id of each instance, to read its resident memory and to kill one; empty leaves memory
    /// out.
    var pids: [Int] = []
    /// Streaming clients connected at once.
    var clients = 1000
    /// Trades published while they listen.
    var trades = 200
    /// Concurrent publishers.
    var publishers = 8
    /// Seconds the whole run may take before it counts as failed.
    var limit = 300.0
    /// Whether to inject faults after the measured trades: kill the second instance (SIGKILL) while
    /// trades are published, then run ``restartDatabase`` and publish more.
    var faults = false
    /// The shell command that restarts the database, for the fault run.
    var restartDatabase: String?
    /// Clients that read `/export` slowly (about 1 KiB every 10 ms) in the export phase; 0 skips it.
    var exportClients = 0
    /// Rows of that export.
    var exportRows = 1_000_000
    /// Seconds the slow clients read.
    var exportSeconds = 10.0

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw OptionError("\(flag) needs a value") }
            switch flag {
            case "--url", "--urls": self.urls = value.split(separator: ",").map(String.init)
            case "--pid", "--pids": self.pids = try value.split(separator: ",").map { try Self.number(flag, String($0), at: 0) }
            case "--faults": self.faults = try Self.flag(flag, value)
            case "--restart-database": self.restartDatabase = value
            case "--clients": self.clients = try Self.number(flag, value, at: 1)
            case "--trades": self.trades = try Self.number(flag, value, at: 1)
            case "--publishers": self.publishers = try Self.number(flag, value, at: 1)
            case "--export-clients": self.exportClients = try Self.number(flag, value, at: 0)
            case "--export-rows": self.exportRows = try Self.number(flag, value, at: 1)
            case "--export-seconds":
                guard let seconds = Double(value), seconds.isFinite, seconds >= 1 else {
                    throw OptionError("--export-seconds needs a number of seconds from 1, got \(value)")
                }
                self.exportSeconds = seconds
            case "--limit":
                guard let seconds = Double(value), seconds.isFinite, seconds > 0 else {
                    throw OptionError("--limit needs a positive number of seconds, got \(value)")
                }
                self.limit = seconds
            default: throw OptionError("unknown argument \(flag)")
            }
        }
        if self.urls.isEmpty { throw OptionError("--urls needs at least one URL") }
        if !self.pids.isEmpty && self.pids.count != self.urls.count {
            throw OptionError("--pids needs one process id per URL: \(self.urls.count), got \(self.pids.count)")
        }
        if self.faults && (self.urls.count < 2 || self.pids.count != self.urls.count || self.restartDatabase == nil) {
            throw OptionError("--faults needs at least two --urls, their --pids and --restart-database")
        }
    }

    private static func flag(_ flag: String, _ value: String) throws -> Bool {
        guard let on = ["yes": true, "no": false][value] else { throw OptionError("\(flag) needs yes or no, got \(value)") }
        return on
    }

    private static func number(_ flag: String, _ value: String, at least: Int) throws -> Int {
        guard let number = Int(value), number >= least else {
            throw OptionError("\(flag) needs a whole number of at least \(least), got \(value)")
        }
        return number
    }
}

struct OptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The resident memory of process `pid` in KiB (`VmRSS`), or its peak (`VmHWM`); nil if unreadable.
func residentKiB(_ pid: Int, peak: Bool = false) -> Int? {
    guard pid > 0, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    let key = peak ? "VmHWM:" : "VmRSS:"
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return nil }
    return Int(line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
}

/// KiB as MiB with one decimal.
func mib(_ kib: Int?) -> String {
    guard let kib else { return "n/a" }
    return String(format: "%.1f MiB", Double(kib) / 1024)
}
