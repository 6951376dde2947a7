#!/usr/bin/env python3
"""Checks that the *Flow control* article's table names every public operator and every hot source.

    Scripts/check-flow-control-table.py      # exit status 1 if the table misses a name or has a stray one

The table in FlowControl.md, section "Where the pacing stops", says for each operator whether a
consumer's bound (`values(bufferingPolicy: .bounded(n))`) reaches the producer above it. A new operator
that nobody put in the table leaves its readers guessing, so CI runs this script:

- Every public operator must appear in backticks in a table row of that section. The operators are the
  public functions declared at top level in Sources/SwiftSignalKit/Operators/** and
  Sources/SwiftSignalKitConcurrency/** (overloads and the `Duration` forms share their name), and the
  public methods of `Signal` declared there and in Core/Signal.swift (`Signal.observing`), less the
  functions in NOT_OPERATORS below.
- Every public class in Sources/SwiftSignalKit/HotSources/ (the hot sources) must appear too, less those
  in NOT_HOT_SOURCES.
- Every name in backticks in the table must be one of those, or one of TABLE_WORDS: a typo, or an
  operator that was renamed or removed, fails the check. `take(until:)` names `take`; `Multicast.get`
  names the hot source `Multicast`; `Signal.observing` names the method `observing`.

Which column a name belongs in is decided by reading the operator (does its subscriber report the
downstream's demand?) and tested in Tests/SwiftSignalKitConcurrencyTests/FlowControlTests.swift; this
script checks only that the table is complete and names nothing that does not exist.

The parsing is line based: a top-level declaration starts in the first column and a member of a type
or extension is indented by four spaces, which the library's formatting (swift-format) keeps reliable.

Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTICLE = ROOT / "Sources" / "SwiftSignalKitConcurrency" / "SwiftSignalKitConcurrency.docc" / "FlowControl.md"
SECTION = "### Where the pacing stops"
OPERATOR_DIRS = [
    ROOT / "Sources" / "SwiftSignalKit" / "Operators",
    ROOT / "Sources" / "SwiftSignalKitConcurrency",
]
SIGNAL_FILE = ROOT / "Sources" / "SwiftSignalKit" / "Core" / "Signal.swift"
HOT_SOURCE_DIR = ROOT / "Sources" / "SwiftSignalKit" / "HotSources"

# Public functions that take or make signals but are no stage a value passes through, with why. Each must
# still exist: a stale entry fails the check too.
NOT_OPERATORS = {
    # Constructors (`single(1, NoError.self)`, `Signal.single(1)`, ...): at most one event, sent at once
    # when started, so there is nothing to pace.
    "single": "a constructor: one value, sent at once",
    "fail": "a constructor: one error, sent at once",
    "complete": "a constructor: completes at once",
    "never": "a constructor: sends nothing",
    # The pipe itself.
    "|>": "applies an operator to a signal; it is not one",
    "identity": "a function on any value, not an operator",
    # Subscribing: the consumer's end of a chain, where a bound is chosen, not a stage it passes through.
    "start": "subscribes: the consumer's end of the chain",
    "startStandalone": "subscribes: the consumer's end of the chain",
    "startStrict": "subscribes: the consumer's end of the chain",
    "values": "the `for await` loop's end of the chain, where the bound is chosen",
    "startValues": "the `for await` loop's end of the chain, where the bound is chosen",
    "get": "awaits the first value: the consumer's end of the chain",
    "first": "awaits the first value: the consumer's end of the chain",
    "assign": "sets a property with each value: the consumer's end of the chain",
}

# Public classes in HotSources/ that are not hot sources, with why.
NOT_HOT_SOURCES = {
    "MulticastPromise": "a bag of callbacks and a lock for hand-written multicasting; it makes no signal",
}

# Names in backticks in the table that are neither operators nor hot sources, with why.
TABLE_WORDS = {
    "Signal": "`Signal(sequence)`, a source that waits, named by its initialiser",
    "waitingForRoom": "how an async body waits for room",
    "putNext": "how a hot source sends",
}

IDENTIFIER = r"`?(?P<name>[A-Za-z_]\w*|[^\s\w(<`]+)`?"
ATTRIBUTES = r"(?:@\w+(?:\([^)]*\))?\s+)*"
TOP_LEVEL_FUNC = re.compile(rf"^{ATTRIBUTES}public\s+func\s+{IDENTIFIER}")
MEMBER_FUNC = re.compile(
    rf"^ {{4}}{ATTRIBUTES}(?:nonisolated(?:\(\w+\))?\s+)?public\s+(?:static\s+)?(?:nonisolated\s+)?func\s+{IDENTIFIER}"
)
SIGNAL_SCOPE = re.compile(rf"^{ATTRIBUTES}(?:public\s+)?(?:final\s+)?(?:class|extension)\s+Signal\b")
HOT_SOURCE = re.compile(rf"^{ATTRIBUTES}public\s+(?:final\s+)?class\s+(?P<name>[A-Za-z_]\w*)")
CODE_SPAN = re.compile(r"`([^`]+)`")
SPAN_NAME = re.compile(r"(?P<head>[A-Za-z_]\w*|[^\s\w(<]+)(?:\.(?P<member>[A-Za-z_]\w*))?")


def relative(path):
    return path.relative_to(ROOT).as_posix()


def operators_in(path, include_top_level=True):
    """{name: "file:line"} of the public top-level functions and public `Signal` methods of one file."""
    found = {}
    scope = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line and not line[0].isspace() and not line.startswith(("}", "/", "#")):
            scope = line
        match = TOP_LEVEL_FUNC.match(line) if include_top_level else None
        if not match and SIGNAL_SCOPE.match(scope):
            match = MEMBER_FUNC.match(line)
        if match:
            found.setdefault(match["name"], f"{relative(path)}:{number}")
    return found


def public_operators():
    operators = {}
    for directory in OPERATOR_DIRS:
        for path in sorted(directory.rglob("*.swift")):
            for name, where in operators_in(path).items():
                operators.setdefault(name, where)
    for name, where in operators_in(SIGNAL_FILE).items():
        operators.setdefault(name, where)
    return operators


def hot_sources():
    sources = {}
    for path in sorted(HOT_SOURCE_DIR.glob("*.swift")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = HOT_SOURCE.match(line)
            if match:
                sources.setdefault(match["name"], f"{relative(path)}:{number}")
    return sources


def table_spans():
    """(code span, line number) of every backticked name in the table rows of the section."""
    lines = ARTICLE.read_text(encoding="utf-8").splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        sys.exit(f"{relative(ARTICLE)}: no section '{SECTION}': the check needs the table in it")
    spans = []
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if line.startswith("#"):
            break
        if line.startswith("|"):
            spans.extend((span, number + 1) for span in CODE_SPAN.findall(line))
    if not spans:
        sys.exit(f"{relative(ARTICLE)}: no table under '{SECTION}'")
    return spans


def main():
    found = public_operators()
    operators = {name: where for name, where in found.items() if name not in NOT_OPERATORS}
    sources = {name: where for name, where in hot_sources().items() if name not in NOT_HOT_SOURCES}
    problems = []

    stale = sorted(name for name in NOT_OPERATORS if name not in found)
    stale += sorted(name for name in NOT_HOT_SOURCES if name not in hot_sources())
    for name in stale:
        problems.append(f"the exclusion list names `{name}`, which is not public any more: remove it from this script")

    named = set()
    for span, number in table_spans():
        match = SPAN_NAME.match(span)
        head, member = (match["head"], match["member"]) if match else (span, None)
        if member and head == "Signal":
            name = member
        elif member and head in sources:
            name = head
        else:
            name = head
        if name in operators or name in sources:
            named.add(name)
        elif name not in TABLE_WORDS:
            problems.append(
                f"{relative(ARTICLE)}:{number}: `{span}` is not a public operator or hot source (a typo, or one "
                "that was renamed or removed?)"
            )

    for name, where in sorted(operators.items()):
        if name not in named:
            problems.append(f"the operator `{name}` ({where}) is missing from the table")
    for name, where in sorted(sources.items()):
        if name not in named:
            problems.append(f"the hot source `{name}` ({where}) is missing from the table")

    if problems:
        print(f"{relative(ARTICLE)}, '{SECTION}': the table and the public operators differ:")
        for problem in problems:
            print(f"  - {problem}")
        print(
            "Put each missing name in the column where it belongs: does its subscriber hand each value on at once, "
            "on the sending thread, and report the downstream's demand (a stage such as Forwarding, "
            "ForwardingTerminals, or Linked(to:passingDemand: true))? If it passes the bound on, add a case to `PassingOperator` in "
            "Tests/SwiftSignalKitConcurrencyTests/FlowControlTests.swift. A public function that is no operator "
            "goes in NOT_OPERATORS in this script, with the reason."
        )
        return 1
    print(f"The flow-control table names all {len(operators)} public operators and {len(sources)} hot sources.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
