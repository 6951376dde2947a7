#!/usr/bin/env python3
"""Checks that the documentation stays in proportion: no page past its word budget.

    Scripts/check-doc-sizes.py      # exit status 1 if a page is over its budget

A newcomer drowned in 52,700 words of Markdown once (#45), and the benchmark README, cut back to its
results then, had doubled again within three days as each change appended its own paragraph. Nothing
failed, so nobody noticed. This script makes growth a decision: a page over its budget fails CI, and
the fix is to move a lab note to `Benchmarks/HISTORY.md`, a detail to the DocC article that owns it, or,
when the page really needs the room, to raise its budget here in the same commit, saying why.

- Every tracked Markdown page (README files, the DocC catalogues, `Migration/`, `docs/`,
  `CONTRIBUTING.md`) has at most `DEFAULT_BUDGET` words, or the budget `BUDGETS` gives it.
- `Benchmarks/HISTORY.md` is a lab notebook kept for the record and has no budget; `CHANGELOG.md` has
  none as a whole, but each entry of its `[Unreleased]` section has at most `CHANGELOG_ENTRY_BUDGET`
  words: what changed and what a user must do, with the detail left to the page it names.

Words are counted as `wc -w` counts them (runs of non-space), code blocks and tables included.

Python 3 standard library only.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_BUDGET = 3_500
BUDGETS = {
    "README.md": 3_000,  # the front page: the two commands, installation, a tour, where to read next
    "Benchmarks/README.md": 10_000,  # results and how to run each suite; every table is in the count
    "CONTRIBUTING.md": 4_500,  # the loop, CI's stages, the operator written the one way, the rules
    "Examples/SignalServer/README.md": 4_300,  # an example server's routes, failure modes and load tests
}
UNBUDGETED = {"Benchmarks/HISTORY.md", "CHANGELOG.md"}
CHANGELOG_ENTRY_BUDGET = 110


def tracked_markdown():
    listed = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return [path for path in listed if not path.startswith(".")]


def words(text):
    return len(text.split())


def changelog_entries(text):
    """The bullets of the `[Unreleased]` section, each with its first line."""
    section = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    entries, current = [], []
    for line in section.splitlines():
        if line.startswith("- "):
            if current:
                entries.append(current)
            current = [line]
        elif line.startswith("  ") and current:
            current.append(line)
        else:
            if current:
                entries.append(current)
            current = []
    if current:
        entries.append(current)
    return entries


def main():
    failures = []
    total = 0
    for path in tracked_markdown():
        if path in UNBUDGETED:
            continue
        count = words((ROOT / path).read_text(encoding="utf-8"))
        total += count
        budget = BUDGETS.get(path, DEFAULT_BUDGET)
        if count > budget:
            failures.append(f"{path}: {count:,} words, over its budget of {budget:,}")
    for path in BUDGETS:
        if not (ROOT / path).exists():
            failures.append(f"{path}: has a budget in this script but does not exist")

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    entries = changelog_entries(changelog)
    for entry in entries:
        count = words("\n".join(entry))
        if count > CHANGELOG_ENTRY_BUDGET:
            first = entry[0][2:62]
            failures.append(
                f"CHANGELOG.md: the [Unreleased] entry \"{first}...\" has {count} words, over "
                f"{CHANGELOG_ENTRY_BUDGET}"
            )

    if failures:
        print("\n".join(failures))
        print(
            "Move the detail to the page that owns it (a lab note to Benchmarks/HISTORY.md), or raise the "
            "budget in Scripts/check-doc-sizes.py in the same commit, saying why."
        )
        sys.exit(1)
    print(
        f"Every page is within its word budget ({total:,} words in all, besides the history and the "
        f"changelog); {len(entries)} changelog entries within {CHANGELOG_ENTRY_BUDGET} words each."
    )


if __name__ == "__main__":
    main()
