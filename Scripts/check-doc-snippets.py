#!/usr/bin/env python3
"""Compiles every ```swift block of README.md, the DocC catalogues and the sources' doc comments.

    Scripts/check-doc-snippets.py            # every block; exit status 1 if one does not compile
    Scripts/check-doc-snippets.py FILE.md    # only the blocks of the given markdown files

How a block is compiled:

- Each block becomes one module of a throwaway package, `.build-snippets/package` (never committed),
  that depends on this package by path and builds in Swift 6 language mode, with warnings as errors and
  `MemberImportVisibility` on, so a block must import every module whose API it uses. One `swift build`
  compiles them all (scratch path `.build-snippets/build`, kept between runs so the library is compiled
  once; the approachable pass below and `Scripts/check-approachable-examples.py` build in it too: SwiftPM
  keeps the library's build when the root package changes, and compiles only the generated modules). A module per block keeps blocks apart: a type or extension a block declares is seen by that
  block only.
- Blocks are fragments. The names they take for granted (`userSignal`, `api.profile(id)`, `Session`, ...)
  are declared in `Scripts/doc-snippets/Context.swift`, compiled as the module `SnippetContext`, which
  every block imports.
- A block's `import` lines are kept; a block without any gets `import SwiftSignalKit` and
  `import SwiftSignalKitConcurrency`.
- Declarations that must be at file scope (from a line at the block's left margin that starts a type,
  extension, protocol, typealias or operator declaration to the next line at the margin that does not
  continue it, such as a closing brace) stay at file scope; every other line goes, in order, into the body of
  `func snippet() async throws`. Names that the block binds at its left margin with `let`, `var` or
  `guard let` are then read once (`_ = name`), so a fragment that never uses a value it shows is not a
  warning.
- `#sourceLocation` directives point the compiler at the markdown file, so every message names the
  markdown file and line.
- The doc comments (`///`) of the Swift files under `Sources/` are read as markdown too: DocC shows
  them as each symbol's page, so their examples are documentation like any other. Each line of a doc
  comment counts without its `///` (and one space after it), every other line as blank, so a message
  names the Swift file and line.

With `--approachable`, the blocks are compiled a second way, as in a module that Swift 6.2 creates
with approachable concurrency: `defaultIsolation(MainActor.self)` and the upcoming features
`NonisolatedNonsendingByDefault` and `InferIsolatedConformances` (package `.build-snippets-approachable`).
Much code that adopts the library is such main-actor code, so every block must compile there too.

An HTML comment on the line just before the fence changes how a block is handled:

    <!-- snippet: top-level -->         the whole block is at file scope, not wrapped
    <!-- snippet: skip <reason> -->     the block is not compiled (for text that is not Swift code,
                                        such as a diagnostics transcript); the reason is required

Python 3 standard library only.
"""

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The migration guide (Migration/*.md and the articles in a catalogue's Migration/ folder) is checked by
# Scripts/check-migration-snippets.py instead: its blocks are copies of the sources under
# Migration/Examples/, which `swift test` builds and runs.
DOC_PATTERNS = ["README.md", "Sources/*/*.docc/**/*.md", "Sources/**/*.swift"]
DOC_COMMENT = re.compile(r"^\s*/// ?(?P<text>.*)$")
MIGRATION_ARTICLES = "Sources/SwiftSignalKitConcurrency/SwiftSignalKitConcurrency.docc/Migration/*.md"
CONTEXT_FILE = ROOT / "Scripts" / "doc-snippets" / "Context.swift"
WORK = ROOT / ".build-snippets"
PACKAGE = WORK / "package"
SCRATCH = WORK / "build"
# The settings of every generated module; `--approachable` adds those of approachable concurrency.
SETTINGS = [
    ".treatAllWarnings(as: .error)",
    '.enableUpcomingFeature("MemberImportVisibility")',
]
APPROACHABLE_SETTINGS = [
    ".defaultIsolation(MainActor.self)",
    '.enableUpcomingFeature("NonisolatedNonsendingByDefault")',
    '.enableUpcomingFeature("InferIsolatedConformances")',
]
LIBRARY_MODULES = ["SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting"]
CONTEXT_MODULE = "SnippetContext"

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*snippet:\s*(?P<kind>\S+)\s*(?P<reason>.*?)\s*-->\s*$")
ATTRIBUTES = r"(?:@[\w.]+(?:\([^)]*\))?\s+)*"
MODIFIERS = (
    r"(?:(?:public|package|internal|fileprivate|private|open|final|indirect|nonisolated|distributed)\s+)*"
)
IMPORT = re.compile(rf"^{ATTRIBUTES}{MODIFIERS}import\s")
# A declaration that cannot be local to a function body: it stays at file scope.
FILE_SCOPE_DECLARATION = re.compile(
    rf"^{ATTRIBUTES}{MODIFIERS}"
    r"(?:extension|protocol|struct|class|enum|actor|typealias|precedencegroup|"
    r"(?:infix|prefix|postfix)\s+operator)\b"
)
ATTRIBUTE_OR_COMMENT = re.compile(r"^(?:@[\w.]+(?:\([^)]*\))?\s*$|//)")
# A line at the margin that continues the item above it.
CONTINUATION = re.compile(r"^(?:[}\])]|\.|\|>|where\b|else\b)")
BOUND_NAME = re.compile(r"^(?P<async>async\s+)?(?:guard\s+)?(?:let|var)\s+(?P<name>[A-Za-z_]\w*)\b")
BOUND_TUPLE = re.compile(r"^(?:let|var)\s*\((?P<names>[^)]*)\)\s*=")
DIAGNOSTIC = re.compile(
    r"^(?P<path>/[^:\n]*):(?P<line>\d+):(?P<column>\d+): (?P<kind>error|warning|note): (?P<message>.*)$"
)


@dataclass
class Snippet:
    path: Path  # relative to ROOT
    fence_line: int  # 1-based line of the opening fence
    lines: list  # the block's lines, without the fence's indentation
    indent: int  # the fence's indentation, to map columns back
    mode: str  # "wrap", "top-level" or "skip"
    reason: str = ""
    diagnostics: list = field(default_factory=list)

    @property
    def first_line(self):
        return self.fence_line + 1

    @property
    def location(self):
        return f"{self.path}:{self.fence_line}"

    @property
    def module(self):
        stem = re.sub(r"[^A-Za-z0-9]+", "_", str(self.path)).strip("_")
        return f"Snippet_{stem}_L{self.fence_line}"


def fail(message):
    print(f"check-doc-snippets: {message}", file=sys.stderr)
    sys.exit(2)


def markdown_files(arguments):
    if arguments:
        files = []
        for argument in arguments:
            path = Path(argument).resolve()
            if not path.is_file():
                fail(f"no such file: {argument}")
            if path not in files:
                files.append(path)
        return files
    found = set()
    for pattern in DOC_PATTERNS:
        found.update(path.resolve() for path in ROOT.glob(pattern) if path.is_file())
    found.difference_update(path.resolve() for path in ROOT.glob(MIGRATION_ARTICLES))
    return sorted(found)


def relative(path):
    try:
        return path.relative_to(ROOT)
    except ValueError:
        return path


def extract(path):
    """The ```swift blocks of one markdown file, or of the doc comments of one Swift file, in order."""
    text = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".swift":
        text = [match["text"] if (match := DOC_COMMENT.match(line)) else "" for line in text]
    snippets = []
    index = 0
    while index < len(text):
        match = FENCE.match(text[index])
        if not match:
            index += 1
            continue
        indent, fence, info = len(match["indent"]), match["fence"], match["info"].strip()
        start = index
        body = []
        index += 1
        while index < len(text):
            closing = FENCE.match(text[index])
            if (
                closing
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            line = text[index]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            index += 1
        else:
            fail(f"{relative(path)}:{start + 1}: the code block is never closed")
        index += 1
        if info.split()[:1] != ["swift"]:
            continue
        mode, reason = "wrap", ""
        previous = start - 1
        while previous >= 0 and not text[previous].strip():
            previous -= 1
        directive = DIRECTIVE.match(text[previous]) if previous >= 0 else None
        if directive:
            mode, reason = directive["kind"], directive["reason"]
            if mode not in ("top-level", "skip"):
                where = f"{relative(path)}:{previous + 1}"
                fail(f"{where}: unknown directive 'snippet: {mode}' (use top-level or skip)")
            if mode == "skip" and not reason:
                fail(f"{relative(path)}:{previous + 1}: 'snippet: skip' needs a reason")
        snippets.append(Snippet(relative(path), start + 1, body, indent, mode, reason))
    return snippets


def split(snippet):
    """(imports, file-scope chunks, body chunks): lists of (first line number, lines)."""
    imports = []
    number = snippet.first_line
    if snippet.mode == "top-level":
        rest = []
        for offset, line in enumerate(snippet.lines):
            if IMPORT.match(line):
                imports.append((number + offset, [line]))
            else:
                rest.append((number + offset, line))
        return imports, chunks(rest), []

    file_scope_entries, body_entries = [], []
    pending = []  # attributes, comments and blank lines at the margin: they belong to what follows them
    item_kind = "body"
    for offset, line in enumerate(snippet.lines):
        entry = (number + offset, line)
        at_margin = line[:1] not in ("", " ", "\t")
        if not line.strip() or (at_margin and ATTRIBUTE_OR_COMMENT.match(line)):
            pending.append(entry)
            continue
        if at_margin and IMPORT.match(line):
            imports.append((entry[0], [line]))
            continue
        if at_margin and not CONTINUATION.match(line):
            item_kind = "file" if FILE_SCOPE_DECLARATION.match(line) else "body"
        target = file_scope_entries if item_kind == "file" else body_entries
        target.extend(pending)
        target.append(entry)
        pending = []
    body_entries.extend(pending)
    return imports, chunks(file_scope_entries), chunks(body_entries)


def chunks(entries):
    """Runs of consecutive lines, each as (first line number, lines)."""
    runs = []
    for number, line in entries:
        if runs and runs[-1][0] + len(runs[-1][1]) == number:
            runs[-1][1].append(line)
        else:
            runs.append((number, [line]))
    return runs


def bound_names(body):
    """The names a block binds at its left margin, each as an expression that reads it."""
    names = []
    for _, lines in body:
        for line in lines:
            match = BOUND_NAME.match(line)
            candidates = [("await " if match["async"] else "") + match["name"]] if match else []
            match = BOUND_TUPLE.match(line)
            if match:
                candidates = [name.strip().split(":")[0].strip() for name in match["names"].split(",")]
            for name in candidates:
                if re.fullmatch(r"(?:await )?[A-Za-z_]\w*", name) and name != "_" and name not in names:
                    names.append(name)
    return names


def generate(snippet):
    markdown = str(ROOT / snippet.path).replace("\\", "\\\\").replace('"', '\\"')
    imports, file_scope, body = split(snippet)

    def located(first_line, lines):
        return [f'#sourceLocation(file: "{markdown}", line: {first_line})', *lines, "#sourceLocation()"]

    out = [f"// Generated by Scripts/check-doc-snippets.py from {snippet.location}. Do not edit.", ""]
    if imports:
        for number, lines in imports:
            out += located(number, lines)
    else:
        out += [f"import {module}" for module in LIBRARY_MODULES]
    out += [f"import {CONTEXT_MODULE}", ""]
    for number, lines in file_scope:
        out += located(number, lines) + [""]
    if snippet.mode == "wrap":
        out.append("func snippet() async throws {")
        for number, lines in body:
            out += located(number, lines)
        names = bound_names(body)
        if names:
            out += located(snippet.fence_line, [f"_ = {name}" for name in names])
        out.append("}")
    return "\n".join(out) + "\n"


def platforms():
    """The root package's `platforms:` list, so the snippets target the same releases."""
    manifest = (ROOT / "Package.swift").read_text(encoding="utf-8")
    match = re.search(r"platforms:\s*(\[[^\]]*\])", manifest)
    return f"    platforms: {match[1]},\n" if match else ""


def manifest(snippets):
    identity = ROOT.name.lower()
    libraries = ", ".join(f'.product(name: "{module}", package: "{identity}")' for module in LIBRARY_MODULES)
    targets = [
        f'        .target(name: "{CONTEXT_MODULE}", dependencies: [{libraries}], swiftSettings: strict),'
    ]
    for snippet in snippets:
        targets.append(
            f'        .target(name: "{snippet.module}", dependencies: ["{CONTEXT_MODULE}", {libraries}], '
            f"swiftSettings: strict),"
        )
    return (
        "// swift-tools-version: 6.2\n"
        "// Generated by Scripts/check-doc-snippets.py. Do not edit.\n"
        "import PackageDescription\n\n"
        "let strict: [SwiftSetting] = [\n" + "".join(f"    {setting},\n" for setting in SETTINGS) + "]\n\n"
        "let package = Package(\n"
        '    name: "DocSnippets",\n'
        f"{platforms()}"
        f'    dependencies: [.package(path: "{ROOT}")],\n'
        "    targets: [\n" + "\n".join(targets) + "\n    ],\n"
        "    swiftLanguageModes: [.v6]\n"
        ")\n"
    )


def write(path, text):
    """Writes only when the text changed, so an unchanged snippet is not compiled again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_package(snippets, targets):
    """Writes a module for each of `snippets`, and a manifest that builds those among `targets`."""
    sources = PACKAGE / "Sources"
    wanted = {CONTEXT_MODULE} | {snippet.module for snippet in snippets}
    if sources.exists():
        for stale in sorted(sources.iterdir()):
            if stale.name not in wanted:
                for file in sorted(stale.rglob("*"), reverse=True):
                    file.unlink() if file.is_file() else file.rmdir()
                stale.rmdir()
    write(PACKAGE / "Package.swift", manifest(targets))
    write(sources / CONTEXT_MODULE / "Context.swift", CONTEXT_FILE.read_text(encoding="utf-8"))
    for snippet in snippets:
        write(sources / snippet.module / "Snippet.swift", generate(snippet))


def build(target=None):
    command = ["swift", "build", "--package-path", str(PACKAGE), "--scratch-path", str(SCRATCH)]
    command += ["--target", target] if target else []
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout


def attribute(output, snippets):
    """Gives each compiler message to the block it is about; returns the messages about nothing else."""
    by_module = {snippet.module: snippet for snippet in snippets}
    by_markdown = {}
    for snippet in snippets:
        by_markdown.setdefault(str(ROOT / snippet.path), []).append(snippet)
    context_copy = PACKAGE / "Sources" / CONTEXT_MODULE / "Context.swift"

    def shown(path):
        return relative(CONTEXT_FILE if Path(path) == context_copy else Path(path))

    others, seen, last = [], set(), None
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line)
        if not match:
            continue
        key = match.group(0)
        if key in seen:  # a message can be printed twice (by the compiler job and by the build summary)
            continue
        seen.add(key)
        path, number, column = match["path"], int(match["line"]), int(match["column"])
        message = f"{match['kind']}: {match['message']}"
        if path in by_markdown:
            blocks = by_markdown[path]
            owner = next((s for s in blocks if s.fence_line <= number <= s.fence_line + len(s.lines)), None)
        else:
            owner = by_module.get(Path(path).parent.name)
        if owner is None and match["kind"] == "note":
            owner = last  # a note about a declaration in the library or the context file
        last = owner
        if owner is None:
            others.append(f"{shown(path)}:{number}:{column}: {message}")
        elif path in by_markdown and owner.fence_line <= number <= owner.fence_line + len(owner.lines):
            source = "```swift" if number == owner.fence_line else owner.lines[number - owner.first_line]
            column += owner.indent
            source = " " * owner.indent + source
            owner.diagnostics.append((f"{owner.path}:{number}:{column}", message, source, column))
        elif Path(path).parent.name == owner.module:
            owner.diagnostics.append((f"{owner.location} (generated wrapper)", message, "", 0))
        else:
            owner.diagnostics.append((f"{shown(path)}:{number}:{column}", message, "", 0))
    return others


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "files", nargs="*", help="markdown or Swift files to check (default: every document and source file)"
    )
    parser.add_argument(
        "--approachable", action="store_true", help="compile as a module with approachable concurrency (main actor by default)"
    )
    arguments = parser.parse_args()
    if arguments.approachable:
        global WORK, PACKAGE, SCRATCH
        WORK = ROOT / ".build-snippets-approachable"
        PACKAGE = WORK / "package"
        # SCRATCH stays: the library, built once there, is built with the same settings for both packages.
        SETTINGS.extend(APPROACHABLE_SETTINGS)

    started = time.monotonic()
    snippets, skipped = [], []
    for path in markdown_files(arguments.files):
        for snippet in extract(path):
            (skipped if snippet.mode == "skip" else snippets).append(snippet)
    # `swift build` stops at the first module that fails and cancels the jobs in flight, whose messages
    # may then be cut short. So each failing block is built again on its own for its complete messages,
    # and the rest again without the failing blocks, until it builds: every failing block is reported
    # with all its messages, whatever order the jobs ran in.
    remaining, others, status, output = list(snippets), [], 0, ""
    while True:
        write_package(snippets, remaining)
        status, output = build()
        if status == 0:
            break
        others = attribute(output, remaining)
        newly_failing = [snippet for snippet in remaining if snippet.diagnostics]
        if not newly_failing or others:
            break
        for snippet in newly_failing:
            snippet.diagnostics = []
            attribute(build(snippet.module)[1], [snippet])
        remaining = [snippet for snippet in remaining if snippet not in newly_failing]
    if status == 0:
        write_package(snippets, snippets)  # leave a package that names every block, for a rerun by hand
    failing = [snippet for snippet in snippets if snippet.diagnostics]
    elapsed = time.monotonic() - started

    for snippet in skipped:
        print(f"skipped: {snippet.location}: {snippet.reason}")
    for snippet in failing:
        print(f"\n{snippet.location}: this ```swift block does not compile")
        for where, message, source, column in snippet.diagnostics:
            print(f"  {where}: {message}")
            if source:
                print(f"    {source}")
                print(f"    {' ' * (column - 1)}^")
    if others:
        print("\nMessages outside the blocks (Scripts/doc-snippets/Context.swift or the library):")
        for line in others:
            print(f"  {line}")
    if status != 0 and not failing and not others:
        print(output)
    checked = len(snippets)
    if status != 0 and not failing:
        print(f"\nThe Swift blocks could not be checked: the build failed outside them ({elapsed:.0f} s).")
        return 1
    if failing:
        print(f"\n{len(failing)} of {checked} Swift blocks do not compile ({elapsed:.0f} s).")
        return 1
    print(f"All {checked} Swift blocks compile ({len(skipped)} skipped; {elapsed:.0f} s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
