import Foundation

/// What the run does; from `--name value` arguments.
struct Options {
    /// The server's base URL.
    var url = "http://127.0.0.1:8080"
    /// The server's process id, to read its resident memory; 0 leaves memory out.
    var pid = 0
    /// Streaming clients connected at once.
    var clients = 1000
    /// Trades published while they listen.
    var trades = 200
    /// Concurrent publishers.
    var publishers = 8
    /// Seconds the whole run may take before it counts as failed.
    var limit = 300.0

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw OptionError("\(flag) needs a value") }
            switch flag {
            case "--url": self.url = value
            case "--pid": self.pid = try Self.number(flag, value, at: 0)
            case "--clients": self.clients = try Self.number(flag, value, at: 1)
            case "--trades": self.trades = try Self.number(flag, value, at: 1)
            case "--publishers": self.publishers = try Self.number(flag, value, at: 1)
            case "--limit":
                guard let seconds = Double(value), seconds.isFinite, seconds > 0 else {
                    throw OptionError("--limit needs a positive number of seconds, got \(value)")
                }
                self.limit = seconds
            default: throw OptionError("unknown argument \(flag)")
            }
        }
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
