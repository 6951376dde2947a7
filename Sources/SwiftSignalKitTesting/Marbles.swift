import SwiftSignalKit

/// Marble diagrams: a signal's events over time, one character per frame of virtual time.
///
/// | Character | Meaning |
/// | --- | --- |
/// | `-` | a frame in which nothing happens |
/// | any other character (a letter or a digit, say; not `?`) | a value, looked up in the `values` dictionary; it takes one frame |
/// | `\|` | completion |
/// | `#` | failure with the given error |
/// | `(ab\|)` | several events in the same frame; the group takes one frame |
/// | space | nothing: for lining diagrams up |
///
/// Frame `n` is `n * frame` seconds after the start (the subscription, for a recorder): in `"-a-b-|"`
/// with `frame: 1`, `a` is at 1 s, `b` at 3 s, and the completion at 5 s.
public enum Marbles {
    /// The events a diagram describes.
    ///
    /// - Parameters:
    ///   - diagram: The marble string, such as `"-a-b-|"`.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`; required when the diagram has one.
    ///   - frame: Seconds per character.
    ///   - start: The time of frame 0.
    ///   - file: The file a precondition failure names; the caller's by default.
    ///   - line: The line a precondition failure names; the caller's by default.
    /// - Returns: The events, in order, with their times.
    ///
    /// > Important: An unknown character, a value character missing from `values`, a key of `values`
    /// > that is marble syntax (`-`, `|`, `#`, `(`, `)`, space) or `?` (what ``diagram(_:values:frame:start:)-(_,_,Double,Double)``
    /// > draws for a value it has no character for), `#` without `error`, an unbalanced, nested or empty
    /// > group, `-` inside a group, an event after `|` or `#`,
    /// > a `frame` that is not a positive finite number, a `start` that is not a finite number, or an
    /// > event later than ``VirtualTimeScheduler/maximumTime`` is a precondition failure naming the
    /// > problem.
    public static func events<T, E: Error>(
        _ diagram: String, values: [Character: T] = [:], error: E? = nil, frame: Double = 1, start: Double = 0,
        file: StaticString = #fileID, line: UInt = #line
    ) -> [Recorded<T, E>] {
        if !(frame > 0 && frame.isFinite) {
            misuse("Marbles: frame must be a positive number of seconds, got \(frame) (diagram \"\(diagram)\")", file: file, line: line)
        }
        if !start.isFinite {
            misuse("Marbles: start must be a finite number of seconds, got \(start) (diagram \"\(diagram)\")", file: file, line: line)
        }
        Self.checkValueCharacters(values.keys, in: diagram, file: file, line: line)
        var events: [Recorded<T, E>] = []
        var index = 0
        var inGroup = false
        var groupIsEmpty = true
        var ended = false
        for character in diagram {
            if ended && character != " " && character != "-" && character != ")" {
                misuse(
                    "Marbles: \"\(character)\" after the end (\"|\" or \"#\") in \"\(diagram)\": nothing follows a signal's end",
                    file: file, line: line)
            }
            let time = start + Double(index) * frame
            // Only an event's time matters: quiet frames and spaces past the end are harmless.
            if !(time <= VirtualTimeScheduler.maximumTime) && !" -()".contains(character) {
                misuse(
                    "Marbles: the event \"\(character)\" of \"\(diagram)\" (frame \(index)) is at \(time) s, after the end of virtual time "
                        + "(VirtualTimeScheduler.maximumTime, \(VirtualTimeScheduler.maximumTime) s): frame \(frame) is too long",
                    file: file, line: line)
            }
            switch character {
            case " ":
                continue
            case "-":
                if inGroup { misuse("Marbles: \"-\" inside a group in \"\(diagram)\"", file: file, line: line) }
            case "(":
                if inGroup { misuse("Marbles: nested \"(\" in \"\(diagram)\"", file: file, line: line) }
                inGroup = true
                groupIsEmpty = true
                continue
            case ")":
                if !inGroup { misuse("Marbles: \")\" without \"(\" in \"\(diagram)\"", file: file, line: line) }
                if groupIsEmpty { misuse("Marbles: an empty group \"()\" in \"\(diagram)\"", file: file, line: line) }
                inGroup = false
            case "|":
                events.append(.completed(at: time))
                ended = true
                groupIsEmpty = false
            case "#":
                guard let error else { misuse("Marbles: \"#\" in \"\(diagram)\" needs the error: argument", file: file, line: line) }
                events.append(.error(error, at: time))
                ended = true
                groupIsEmpty = false
            default:
                guard let value = values[character] else {
                    misuse(
                        "Marbles: no value for \"\(character)\" in \"\(diagram)\"; values has \(values.keys.sorted())", file: file,
                        line: line)
                }
                events.append(.next(value, at: time))
                groupIsEmpty = false
            }
            if !inGroup {
                index += 1
            }
        }
        if inGroup { misuse("Marbles: \"(\" without \")\" in \"\(diagram)\"", file: file, line: line) }
        return events
    }

    /// Draws `events` as a diagram, if every event falls on a frame; a value without a character in
    /// `values` is drawn as `?`.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - values: The characters of the values.
    ///   - frame: Seconds per character.
    ///   - start: The time of frame 0.
    /// - Returns: The diagram, or nil when an event falls between frames, before `start`, or 10,000
    ///   frames or more after it. An event is on a frame when its time equals the frame's as recorded
    ///   events compare (``Recorded``'s `==`), or is within a millionth of a frame of it.
    ///
    /// > Important: A key of `values` that ``events(_:values:error:frame:start:file:line:)-(_,_,_,Double,Double,_,_)`` refuses
    /// > (marble syntax, or `?`), a `frame` that is not a positive finite number, or a `start` that is
    /// > not a finite number is a precondition failure naming the problem.
    public static func diagram<T: Equatable, E: Error>(
        _ events: [Recorded<T, E>], values: [Character: T], frame: Double = 1, start: Double = 0
    ) -> String? {
        if !(frame > 0 && frame.isFinite) {
            misuse("Marbles.diagram: frame must be a positive number of seconds, got \(frame)")
        }
        if !start.isFinite {
            misuse("Marbles.diagram: start must be a finite number of seconds, got \(start)")
        }
        Self.checkValueCharacters(values.keys, in: nil)
        var frames: [(index: Int, symbol: Character)] = []
        for recorded in events.sorted(by: { $0.time < $1.time }) {
            let position = (recorded.time - start) / frame
            let index = position.rounded()
            // Late in virtual time a `Double` holds the time less finely than a millionth of a short
            // frame: there the frame's own time, computed as a diagram computes it, decides.
            let onFrame = abs(position - index) < 1e-6 || recordedTimesAreEqual(recorded.time, start + index * frame)
            guard onFrame, index >= 0, index < 10_000 else { return nil }
            let symbol: Character
            switch recorded.event {
            case .completed:
                symbol = "|"
            case .error:
                symbol = "#"
            case .next(let value):
                // Sorted, so the same value always gets the same character.
                symbol = values.keys.sorted().first(where: { values[$0] == value }) ?? "?"
            }
            frames.append((Int(index), symbol))
        }
        var diagram = ""
        var frameIndex = 0
        var position = 0
        while position < frames.count {
            let index = frames[position].index
            while frameIndex < index {
                diagram.append("-")
                frameIndex += 1
            }
            var group: [Character] = []
            while position < frames.count && frames[position].index == index {
                group.append(frames[position].symbol)
                position += 1
            }
            diagram += group.count == 1 ? String(group) : "(" + String(group) + ")"
            frameIndex += 1
        }
        return diagram
    }

    /// The characters a diagram reads as syntax, and `?`, which a drawing gives a value it has no
    /// character for: none can stand for a value.
    static let syntax: Set<Character> = ["-", "|", "#", "(", ")", " ", "?"]

    /// Stops with a message naming the key when a key of `values` is marble syntax: it would never be
    /// read as a value, and a diagram drawn with it could not be read back.
    static func checkValueCharacters(
        _ keys: some Collection<Character>, in diagram: String?, file: StaticString = #fileID, line: UInt = #line
    ) {
        guard let key = keys.first(where: { Self.syntax.contains($0) }) else { return }
        let context = diagram.map { " (diagram \"\($0)\")" } ?? ""
        let what = key == "?" ? "is what a drawing shows for a value it has no character for" : "is marble syntax"
        misuse(
            "Marbles: \"\(key)\" \(what), and cannot stand for a value in values\(context); use a letter or a digit",
            file: file, line: line)
    }
}
