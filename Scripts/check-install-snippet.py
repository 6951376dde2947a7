#!/usr/bin/env python3
"""Checks that the README's instructions for adding SwiftSignalKit to a package work.

    Scripts/check-install-snippet.py     # exit status 1 if the snippet does not resolve and build

The manifest in the README's section "Adding SwiftSignalKit to a package" becomes a throwaway package,
`.build-install/MyServer` (never committed), with its `.package(url:from:)` line pointing at this
checkout by path instead (through a link named like the URL's last path component, so the manifest's
`package:` arguments resolve unchanged). Each target the manifest declares gets a source file that
imports every product the target depends on and uses one symbol of each; then `swift build
--build-tests` must succeed with warnings as errors.

The section's form for a checkout, a `.package(path: "...")` line, is the one the throwaway package
uses, so it is built too; and the failure the section describes for a checkout in a folder of another
name (SwiftPM's "unknown package ... valid packages are: ...") is reproduced, so that the words the
README quotes stay the words SwiftPM prints.

It also checks that the version and URL are the same everywhere a newcomer reads them: the README's
manifest, the newest release in CHANGELOG.md and the first paragraph of each DocC landing page.

Python 3 standard library only.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".build-install"
SECTION = "## Adding SwiftSignalKit to a package"
LANDING_PAGES = [
    ROOT / "Sources" / module / f"{module}.docc" / f"{module}.md"
    for module in ("SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting")
]
DEPENDENCY = re.compile(r'\.package\(url:\s*"(?P<url>[^"]+)",\s*from:\s*"(?P<version>[^"]+)"\)')
TARGET = re.compile(r'\.(?P<kind>executableTarget|target|testTarget)\(\s*name:\s*"(?P<name>[^"]+)"')
PATH_DEPENDENCY = re.compile(r'\.package\(path:\s*"(?P<path>[^"]+)"\)')
PRODUCT = re.compile(r'\.product\(name:\s*"(?P<name>[^"]+)",\s*package:\s*"(?P<package>[^"]+)"\)')

# One line per product that proves its module is imported and usable.
USES = {
    "SwiftSignalKit": "_ = Signal<Int, NoError>.single(1) |> map { $0 + 1 }",
    "SwiftSignalKitConcurrency": "_ = Signal<Int, NoError>(operation: { 1 })",
    "SwiftSignalKitTesting": "_ = VirtualTimeScheduler()",
}


def fail(message):
    print(f"check-install-snippet: {message}")
    sys.exit(1)


def readme_section():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.find(SECTION)
    if start < 0:
        fail(f'README.md has no section "{SECTION}"')
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end >= 0 else len(text)]


def readme_manifest(section):
    block = re.search(r"```swift\n(?P<body>// swift-tools-version:.*?)```", section, re.S)
    if not block:
        fail("the section has no ```swift block that starts with `// swift-tools-version:`")
    return block["body"]


def readme_path_dependency(section, identity):
    """The section's `.package(path:)` line for a checkout, whose folder must be named `identity`."""
    match = PATH_DEPENDENCY.search(section)
    if not match:
        fail('the section shows no `.package(path: "...")` line for a checkout')
    folder = match["path"].rstrip("/").split("/")[-1]
    if folder.lower() != identity.lower():
        fail(f"the section's path form names the folder {folder!r}, but the products name the package {identity!r}")
    return match.group(0), match["path"]


def unknown_package_is_reported(manifest, dependency, section):
    """With the checkout in a folder of another name, SwiftPM refuses the manifest as the README says."""
    quoted = re.search(r"`(unknown package '[^`]*valid packages are: '[^`]*')`", section)
    if not quoted:
        fail("the section does not quote SwiftPM's `unknown package ... valid packages are: ...` error")
    work = WORK / "misnamed"
    package = work / "MyServer"
    package.mkdir(parents=True)
    (work / "clone").symlink_to(ROOT, target_is_directory=True)
    (package / "Package.swift").write_text(manifest.replace(dependency, '.package(path: "../clone")'), encoding="utf-8")
    command = ["swift", "package", "--package-path", str(package), "--scratch-path", str(work / "build"), "describe"]
    result = subprocess.run(command, capture_output=True, text=True)
    printed = result.stdout + result.stderr
    if result.returncode == 0 or quoted[1] not in printed:
        print(printed)
        fail(f"a checkout in a folder named 'clone' did not fail with the error the README quotes: {quoted[1]}")


def newest_release():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    release = re.search(r"^## \[(?P<version>\d+\.\d+\.\d+)\]", changelog, re.M)
    if not release:
        fail("CHANGELOG.md names no release")
    return release["version"]


def target_sources(manifest):
    """The body of each target's one source file, from the products the target depends on."""
    sources = {}
    matches = list(TARGET.finditer(manifest))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(manifest)
        products = [product["name"] for product in PRODUCT.finditer(manifest[match.end() : end])]
        unknown = [name for name in products if name not in USES]
        if unknown:
            fail(f"target {match['name']} depends on unknown products {unknown}")
        imports = "".join(f"import {name}\n" for name in products)
        uses = "".join(f"    {USES[name]}\n" for name in products)
        if match["kind"] == "testTarget":
            body = f"{imports}import Testing\n\n@Test func productsAreUsable() {{\n{uses}}}\n"
            path = Path("Tests") / match["name"] / "ProductsTests.swift"
        else:
            body = f"{imports}\nfunc useProducts() {{\n{uses}}}\n"
            if match["kind"] == "executableTarget":
                body += "\nuseProducts()\n"
                path = Path("Sources") / match["name"] / "main.swift"
            else:
                path = Path("Sources") / match["name"] / f"{match['name']}.swift"
        sources[path] = body
    if not sources:
        fail("the manifest declares no target")
    return sources


def main():
    section = readme_section()
    manifest = readme_manifest(section)
    dependency = DEPENDENCY.search(manifest)
    if not dependency:
        fail('the manifest has no `.package(url: "...", from: "...")` line')
    url, version = dependency["url"], dependency["version"]
    if version != newest_release():
        fail(f"the README asks for {version}, but the newest release in CHANGELOG.md is {newest_release()}")
    for page in LANDING_PAGES:
        if dependency.group(0) not in page.read_text(encoding="utf-8"):
            fail(f"{page.relative_to(ROOT)} does not show `{dependency.group(0)}`")

    identity = url.rstrip("/").split("/")[-1].removesuffix(".git")
    path_line, path = readme_path_dependency(section, identity)
    shutil.rmtree(WORK, ignore_errors=True)
    package = WORK / "MyServer"
    package.mkdir(parents=True)
    # The checkout, where the README's path form expects it (relative to the package).
    (package / path).parent.mkdir(parents=True, exist_ok=True)
    (package / path).symlink_to(ROOT, target_is_directory=True)
    local = manifest.replace(dependency.group(0), path_line)
    (package / "Package.swift").write_text(local, encoding="utf-8")
    for path, body in target_sources(manifest).items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(body, encoding="utf-8")

    command = [
        "swift", "build", "--build-tests", "--package-path", str(package),
        "--scratch-path", str(WORK / "build"), "-Xswiftc", "-warnings-as-errors",
    ]
    print("check-install-snippet: " + " ".join(command))
    if subprocess.run(command).returncode != 0:
        fail("a package made from the README's manifest does not build")
    unknown_package_is_reported(manifest, dependency.group(0), section)
    print(
        f"A package made from the README's manifest ({url} {version}, by the README's path form) resolves and builds;"
        " a checkout in a folder of another name fails as the README says."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
