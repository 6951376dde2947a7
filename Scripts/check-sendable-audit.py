#!/usr/bin/env python3
"""Checks that Migration/SendableAudit.md covers every public type and every escape hatch.

    Scripts/check-sendable-audit.py      # exit status 1 if the audit misses something

The audit answers "can this cross threads?" for each public type, and justifies each place the library
tells the compiler to trust it. A new type or a new escape hatch that nobody wrote down is how an unsound
`Sendable` slips in, so CI runs this script:

- Every public type declared in the three library modules (`public` class, struct, enum, actor or
  protocol, nested ones named with their outer type, e.g. `VirtualClock.Instant`) must appear in
  backticks in the first cell of a table row of the audit's "Public types" section. Generic parameters
  are ignored: `Bag<T>` names `Bag`.
- Every type that the code marks `@unchecked Sendable`, and every type that holds a `nonisolated(unsafe)`
  declaration, must appear in backticks in the first cell of a table row of the audit (either section).

The parsing is line based (declarations, and braces outside strings and comments, to know which type a
declaration sits in), which the library's formatting (swift-format) keeps reliable.

Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "Migration" / "SendableAudit.md"
MODULES = ["SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting"]

TYPE_DECL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?P<access>(?:public|open|package|internal|private|fileprivate)\s+)?"
    r"(?:(?:final|indirect|nonisolated|@unchecked)\s+)*(?P<kind>class|struct|enum|actor|protocol|extension)\s+"
    r"(?P<name>[A-Za-z_][\w.]*)"
)
UNCHECKED = re.compile(r"@unchecked\s+Sendable")
UNSAFE = re.compile(r"nonisolated\(unsafe\)")


def code_only(line, in_block_comment):
    """The line without comments and string contents, and whether a block comment is still open."""
    out = []
    index = 0
    in_string = False
    while index < len(line):
        if in_block_comment:
            end = line.find("*/", index)
            if end < 0:
                return "".join(out), True
            index = end + 2
            in_block_comment = False
            continue
        if in_string:
            if line[index] == "\\":
                index += 2
                continue
            if line[index] == '"':
                in_string = False
            index += 1
            continue
        if line.startswith("//", index):
            break
        if line.startswith("/*", index):
            in_block_comment = True
            index += 2
            continue
        if line[index] == '"':
            in_string = True
            out.append('"')
            index += 1
            continue
        out.append(line[index])
        index += 1
    return "".join(out), in_block_comment


def scan(path):
    """(public types, types with @unchecked Sendable, types holding nonisolated(unsafe)) of one file."""
    public, unchecked, unsafe = set(), set(), set()
    stack = []  # (qualified name or None, brace depth at which its body opened, is public)
    depth = 0
    in_block_comment = False
    pending = None  # a declaration whose `{` has not been seen yet
    for raw in path.read_text(encoding="utf-8").splitlines():
        line, in_block_comment = code_only(raw, in_block_comment)
        match = TYPE_DECL.match(line)
        if match and match["name"] in ("func", "var", "let", "subscript", "init"):
            match = None  # a class member (`public class func`), not a type
        if match:
            kind, name = match["kind"], match["name"]
            outer = next((entry[0] for entry in reversed(stack) if entry[0]), None)
            if kind == "extension":
                qualified = name
            else:
                qualified = f"{outer}.{name}" if outer else name
                access = (match["access"] or "").strip()
                outer_public = all(entry[2] for entry in stack if entry[0]) if stack else True
                if access in ("public", "open") and (outer_public or kind == "extension"):
                    public.add(qualified)
            if UNCHECKED.search(line):
                unchecked.add(qualified)
            pending = (qualified, kind == "extension" or (match["access"] or "").strip() in ("public", "open"))
        elif UNCHECKED.search(line):
            # `@unchecked Sendable` on a continuation line of a declaration.
            owner = pending[0] if pending else next((entry[0] for entry in reversed(stack) if entry[0]), None)
            if owner:
                unchecked.add(owner)
        if UNSAFE.search(line):
            owner = next((entry[0] for entry in reversed(stack) if entry[0]), None)
            if owner:
                unsafe.add(owner)
        for char in line:
            if char == "{":
                depth += 1
                if pending:
                    stack.append((pending[0], depth, pending[1]))
                    pending = None
                else:
                    stack.append((None, depth, True))
            elif char == "}":
                if stack and stack[-1][1] == depth:
                    stack.pop()
                depth -= 1
    return public, unchecked, unsafe


def named_in(text):
    """Every backticked name in the first cell of the table rows of `text` (the type, or where an escape
    hatch is), without generic parameters: a name mentioned only in a justification does not count."""
    names = set()
    cells = [line.split("|")[1] for line in text.splitlines() if line.startswith("|") and line.count("|") > 2]
    for code in re.findall(r"`([^`]+)`", "\n".join(cells)):
        plain = re.sub(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>", "", code).strip()
        if re.fullmatch(r"[A-Za-z_][\w.]*", plain):
            names.add(plain)
    return names


def main():
    audit = AUDIT.read_text(encoding="utf-8")
    start = audit.find("## Public types")
    end = audit.find("\n## ", start + 1)
    public_section = named_in(audit[start:end])
    everywhere = named_in(audit)

    public, unchecked, unsafe = set(), set(), set()
    for module in MODULES:
        for path in sorted((ROOT / "Sources" / module).rglob("*.swift")):
            found = scan(path)
            public |= found[0]
            unchecked |= {(name, path) for name in found[1]}
            unsafe |= {(name, path) for name in found[2]}

    problems = []
    for name in sorted(public):
        if name not in public_section:
            problems.append(f"public type `{name}` is not in the audit's \"Public types\" section")
    for name, path in sorted(unchecked):
        if name not in everywhere and name.split(".")[-1] not in everywhere:
            problems.append(f"`{name}` ({path.relative_to(ROOT)}) is `@unchecked Sendable` but the audit does not name it")
    for name, path in sorted(unsafe):
        if name not in everywhere and name.split(".")[-1] not in everywhere:
            problems.append(f"`{name}` ({path.relative_to(ROOT)}) holds a `nonisolated(unsafe)` declaration but the audit does not name it")

    if problems:
        print("Migration/SendableAudit.md is missing entries (see Scripts/check-sendable-audit.py):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"The Sendable audit names all {len(public)} public types and every escape hatch "
          f"({len(unchecked)} @unchecked Sendable, {len(unsafe)} types with nonisolated(unsafe)).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
