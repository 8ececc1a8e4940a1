#!/usr/bin/env python3
"""One version for the whole project (standard library only).

The source is `[workspace.package] version` in Cargo.toml. Every other place
a version is written must equal it:
  - each workspace crate's version (`version.workspace = true`, or the same
    number written out), from `cargo metadata`, so crates added later are
    checked too;
  - the `version` of every path dependency between the crates that are
    published (crates.io needs one next to `path`);
  - npm/package.json and the package's own entry in npm/package-lock.json;
  - the Python package: its version is `dynamic`, taken by maturin from
    crates/python's Cargo.toml, never written in pyproject.toml;
  - the Maven POMs (java/, examples/*/pom.xml): each one's own version,
    and its parent's where the parent is the project's;
  - CHANGELOG.md has a section for it (Keep a Changelog: `## [X.Y.Z] - date`).

    python3 tests/release/versions.py      # prints the version, or what differs

Ends with `N passed, N failed` and exits non-zero when a check failed.
"""

import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())
    version = workspace["workspace"]["package"]["version"]
    checks: list[tuple[str, bool, str]] = []

    def check(what: str, found: object) -> None:
        checks.append((what, found == version, f"{found!r}"))

    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    published = {p["name"] for p in meta["packages"] if p["publish"] != []}
    for package in sorted(meta["packages"], key=lambda p: p["name"]):
        check(f"crate {package['name']}", package["version"])
        if package["name"] not in published:
            continue
        for dep in package["dependencies"]:
            if dep.get("path") and dep["kind"] in (None, "build"):
                checks.append(
                    (
                        f"crate {package['name']}: dependency {dep['name']} (path and version, for crates.io)",
                        dep["req"] in (f"^{version}", f"={version}"),
                        dep["req"],
                    )
                )

    npm = json.loads((ROOT / "npm/package.json").read_text())
    check("npm/package.json", npm["version"])
    lock = json.loads((ROOT / "npm/package-lock.json").read_text())
    check("npm/package-lock.json (the package itself)", lock.get("version"))
    check("npm/package-lock.json (packages[''])", lock["packages"][""].get("version"))

    pyproject = tomllib.loads((ROOT / "crates/python/pyproject.toml").read_text())
    project = pyproject["project"]
    checks.append(
        (
            "crates/python/pyproject.toml: version dynamic (from Cargo.toml), never written",
            "version" in project.get("dynamic", []) and "version" not in project,
            f"dynamic={project.get('dynamic')}, version={project.get('version')}",
        )
    )
    python_crate = next(p for p in meta["packages"] if p["name"] == "toolctx-python")
    check("the Python package (maturin reads toolctx-python)", python_crate["version"])

    # Maven: a module's version is its parent's unless written.
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    poms = sorted([*ROOT.glob("java/pom.xml"), *ROOT.glob("java/*/pom.xml"), *ROOT.glob("examples/*/pom.xml")])
    checks.append(("Maven POMs found", bool(poms), f"{len(poms)}"))
    for pom in poms:
        project = ET.parse(pom).getroot()
        where = pom.relative_to(ROOT)
        own = project.find("m:version", ns)
        if own is not None:
            check(f"{where}: version", own.text)
        parent = project.find("m:parent", ns)
        if parent is not None and parent.findtext("m:groupId", namespaces=ns) == "dev.toolctx":
            check(f"{where}: parent dev.toolctx version", parent.findtext("m:version", namespaces=ns))
        elif own is None:
            checks.append((f"{where}: a version, its own or the project parent's", False, "none"))

    changelog = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?", changelog, re.M)
    released = [v for v, date in headings if v != "Unreleased"]
    check("CHANGELOG.md: the newest release section", released[0] if released else None)

    failed = [c for c in checks if not c[1]]
    for what, _, found in failed:
        print(f"{what}: {found}, expected {version}")
    print(f"version {version}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
