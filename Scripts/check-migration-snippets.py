#!/usr/bin/env python3
"""Checks that the code of the migration guide is the code that `swift test` builds and runs.

    Scripts/check-migration-snippets.py            # exit status 1 if a block is not backed by the sources
    Scripts/check-migration-snippets.py --update   # rewrite the ```diff blocks from the sources

The guide is Migration/*.md (its landing page, the troubleshooting page and the references) and its
DocC articles, Sources/SwiftSignalKitConcurrency/SwiftSignalKitConcurrency.docc/Migration/*.md (which
Scripts/check-doc-snippets.py leaves to this script). Its code lives in Swift files under Migration/Examples/, which the root package builds as
targets and tests (see Package.swift). A markdown block cannot rot while it is a copy of those files:

- Every ```swift block must appear, line for line, in one Swift file under Migration/Examples/: the
  block's lines, with its common indentation removed, must be a run of consecutive lines of the file,
  all indented by the same extra amount there (a method shown without its type, say). Trailing spaces
  are ignored. A block that shows what does not compile (a compiler message) is not a ```swift block:
  use ```text.
- Every ```diff block must be preceded by a comment naming the two files it compares, relative to the
  repository root:

      <!-- diff: Migration/Examples/Sources/A/File.swift Migration/Examples/Sources/B/File.swift -->

  and must be exactly the unified diff of those files (3 lines of context, headers without dates).
  `--update` writes that diff into the block.
- Every Swift file under Migration/Examples/ must belong to a target of Package.swift (a `path:` that
  contains it), so every block is compiled, and the tests beside it run, by `swift build`/`swift test`.

Python 3 standard library only.
"""

import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "Migration"
EXAMPLES = GUIDE / "Examples"
ARTICLES = ROOT / "Sources" / "SwiftSignalKitConcurrency" / "SwiftSignalKitConcurrency.docc" / "Migration"
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>.*)$")
DIFF_DIRECTIVE = re.compile(r"^\s*<!--\s*diff:\s*(?P<old>\S+)\s+(?P<new>\S+)\s*-->\s*$")
TARGET_PATH = re.compile(r'path:\s*"(?P<path>Migration/Examples/[^"]+)"')


def blocks(path):
    """The fenced blocks of a markdown file: (language, first line index, end line index, lines, indent)."""
    text = path.read_text(encoding="utf-8").splitlines()
    found = []
    index = 0
    while index < len(text):
        match = FENCE.match(text[index])
        if not match:
            index += 1
            continue
        indent, fence, info = len(match["indent"]), match["fence"], match["info"].strip()
        start = index
        index += 1
        body = []
        while index < len(text):
            closing = FENCE.match(text[index])
            if closing and len(closing["fence"]) >= len(fence) and not closing["info"].strip():
                break
            body.append(text[index][indent:] if text[index][:indent].strip() == "" else text[index].lstrip())
            index += 1
        else:
            sys.exit(f"{path.relative_to(ROOT)}:{start + 1}: the code block is never closed")
        found.append((info.split()[0] if info else "", start, index, body, indent))
        index += 1
    return text, found


def dedent(lines):
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line), default=0)
    return [line[margin:] for line in lines]


def appears_in(block, source):
    """Whether `block` is a run of consecutive lines of `source`, all indented by one extra amount."""
    if not block:
        return True
    first = block[0]
    for start, line in enumerate(source):
        if not line.endswith(first) or line[: len(line) - len(first)].strip():
            continue
        extra = line[: len(line) - len(first)]
        if start + len(block) > len(source):
            return False
        if all(
            (not want and not have) or have == extra + want
            for want, have in zip(block, source[start : start + len(block)])
        ):
            return True
    return False


def unified_diff(old, new):
    old_lines = (ROOT / old).read_text(encoding="utf-8").splitlines()
    new_lines = (ROOT / new).read_text(encoding="utf-8").splitlines()
    return list(difflib.unified_diff(old_lines, new_lines, fromfile=old, tofile=new, lineterm="", n=3))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the diff blocks from the sources")
    arguments = parser.parse_args()

    sources = {}
    for path in sorted(EXAMPLES.rglob("*.swift")):
        sources[path] = [line.rstrip() for line in path.read_text(encoding="utf-8").splitlines()]
    if not sources:
        sys.exit("check-migration-snippets: no Swift files under Migration/Examples")

    problems = []
    manifest = (ROOT / "Package.swift").read_text(encoding="utf-8")
    target_paths = [ROOT / match["path"] for match in TARGET_PATH.finditer(manifest)]
    for path in sources:
        if not any(target in path.parents for target in target_paths):
            problems.append(f"{path.relative_to(ROOT)}: not in any target of Package.swift, so never compiled")

    checked = 0
    documents = sorted(GUIDE.glob("*.md")) + sorted(ARTICLES.glob("*.md"))
    if not list(ARTICLES.glob("*.md")):
        problems.append(f"{ARTICLES.relative_to(ROOT)}: no articles; the guide's pages moved?")
    for document in documents:
        text, found = blocks(document)
        replacements = []
        for language, start, end, body, indent in found:
            where = f"{document.relative_to(ROOT)}:{start + 1}"
            if language == "swift":
                checked += 1
                block = dedent(body)
                if not any(appears_in(block, lines) for lines in sources.values()):
                    problems.append(f"{where}: this ```swift block is not in any file under Migration/Examples/")
            elif language == "diff":
                checked += 1
                previous = start - 1
                while previous >= 0 and not text[previous].strip():
                    previous -= 1
                directive = DIFF_DIRECTIVE.match(text[previous]) if previous >= 0 else None
                if not directive:
                    problems.append(f"{where}: a ```diff block needs '<!-- diff: OLD NEW -->' on the line above")
                    continue
                missing = [name for name in (directive["old"], directive["new"]) if not (ROOT / name).is_file()]
                if missing:
                    problems.append(f"{where}: no such file: {', '.join(missing)}")
                    continue
                expected = unified_diff(directive["old"], directive["new"])
                if [line.rstrip() for line in body] != [line.rstrip() for line in expected]:
                    if arguments.update:
                        replacements.append((start + 1, end, [" " * indent + line for line in expected]))
                    else:
                        problems.append(
                            f"{where}: this ```diff block is not the diff of {directive['old']} and "
                            f"{directive['new']} (run Scripts/check-migration-snippets.py --update)"
                        )
        if replacements:
            for first, end, lines in reversed(replacements):
                text[first:end] = lines
            document.write_text("\n".join(text) + "\n", encoding="utf-8")
            print(f"updated {len(replacements)} diff block(s) in {document.relative_to(ROOT)}")

    for problem in problems:
        print(problem)
    if problems:
        print(f"\n{len(problems)} problem(s) in the {checked} code blocks of the migration guide.")
        return 1
    print(f"All {checked} code blocks of the migration guide ({len(documents)} pages) come from the sources under Migration/Examples/.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
