#!/usr/bin/env python3
"""Checks that the example operator in CONTRIBUTING.md is the code the tests compile.

    Scripts/check-contributing-example.py      # exit status 1 if the two differ

CONTRIBUTING.md, "Adding an operator", shows one operator written the one way (a stage and
`Signal.subscribe`). The example uses the library's internal API, so it cannot be compiled on its own:
Tests/SwiftSignalKitTests/OperatorSubscriberTests.swift holds the same code, under "The example of
CONTRIBUTING.md", and tests it. This script fails when the Swift block of that checklist item is not,
line for line (less its indentation), in the test file, so that neither changes without the other.

Python 3 standard library only.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GUIDE = ROOT / "CONTRIBUTING.md"
TESTS = ROOT / "Tests/SwiftSignalKitTests/OperatorSubscriberTests.swift"
ITEM = "**One way to subscribe upstream.**"


def main():
    guide = GUIDE.read_text()
    start = guide.find(ITEM)
    if start < 0:
        print(f"CONTRIBUTING.md: the checklist item {ITEM} is not there any more; update this script")
        return 1
    block = re.search(r"```swift\n(.*?)\n\s*```", guide[start:], re.S)
    if block is None:
        print(f"CONTRIBUTING.md: the item {ITEM} has no Swift block")
        return 1
    example = "\n".join(line[2:] if line.startswith("  ") else line for line in block.group(1).splitlines())
    if example not in TESTS.read_text():
        print(
            f"CONTRIBUTING.md's example operator ({ITEM}) is not, line for line, in "
            f"{TESTS.relative_to(ROOT)}: change both together, so that the example compiles and is tested"
        )
        return 1
    print(f"CONTRIBUTING.md's example operator is the code {TESTS.relative_to(ROOT)} compiles and tests.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
