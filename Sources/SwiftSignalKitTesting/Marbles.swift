import SwiftSignalKit

/// Marble diagrams: a signal's events over time, one character per frame of virtual time.
///
/// | Character | Meaning |
/// | --- | --- |
/// | `-` | a frame in which nothing happens |
/// | a letter or digit | a value, looked up in the `values` dictionary; it takes one frame |
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
    /// - Returns: The events, in order, with their times.
    ///
    /// > Important: An unknown character, a value character missing from `values`, `#` without `error`,
    /// > an unbalanced group, or a `frame` that is not a positive finite number is a precondition
    /// > failure naming the problem.
    public static func events<T, E: Error>(
        _ diagram: String, values: [Character: T] = [:], error: E? = nil, frame: Double = 1, start: Double = 0
    ) -> [Recorded<T, E>] {
        if !(frame > 0 && frame.isFinite) {
            misuse("Marbles: frame must be a positive number of seconds, got \(frame) (diagram \"\(diagram)\")")
        }
        var events: [Recorded<T, E>] = []
        var index = 0
        var inGroup = false
        var groupIsEmpty = true
        var ended = false
        for character in diagram {
            if ended && character != " " && character != "-" && character != ")" {
                misuse("Marbles: \"\(character)\" after the end (\"|\" or \"#\") in \"\(diagram)\": nothing follows a signal's end")
            }
            let time = start + Double(index) * frame
            switch character {
            case " ":
                continue
            case "-":
                if inGroup { misuse("Marbles: \"-\" inside a group in \"\(diagram)\"") }
            case "(":
                if inGroup { misuse("Marbles: nested \"(\" in \"\(diagram)\"") }
                inGroup = true
                groupIsEmpty = true
                continue
            case ")":
                if !inGroup { misuse("Marbles: \")\" without \"(\" in \"\(diagram)\"") }
                if groupIsEmpty { misuse("Marbles: an empty group \"()\" in \"\(diagram)\"") }
                inGroup = false
            case "|":
                events.append(.completed(at: time))
                ended = true
                groupIsEmpty = false
            case "#":
                guard let error else { misuse("Marbles: \"#\" in \"\(diagram)\" needs the error: argument") }
                events.append(.error(error, at: time))
                ended = true
                groupIsEmpty = false
            default:
                guard let value = values[character] else {
                    misuse("Marbles: no value for \"\(character)\" in \"\(diagram)\"; values has \(values.keys.sorted())")
                }
                events.append(.next(value, at: time))
                groupIsEmpty = false
            }
            if !inGroup {
                index += 1
            }
        }
        if inGroup { misuse("Marbles: \"(\" without \")\" in \"\(diagram)\"") }
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
    /// - Returns: The diagram, or nil when an event falls between frames, before `start`, or more than
    ///   10,000 frames after it.
    public static func diagram<T: Equatable, E: Error>(
        _ events: [Recorded<T, E>], values: [Character: T], frame: Double = 1, start: Double = 0
    ) -> String? {
        var frames: [(index: Int, symbol: Character)] = []
        for recorded in events.sorted(by: { $0.time < $1.time }) {
            let position = (recorded.time - start) / frame
            let index = position.rounded()
            guard abs(position - index) < 1e-6, index >= 0, index < 10_000 else { return nil }
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
}
