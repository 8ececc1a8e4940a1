"""The vector generators' command line, written once for all of them:
write the files a generator renders, or with `--check` compare them byte
for byte with the committed ones (exit 1 when one differs).

Standard library only, like the generators that use it; it knows nothing
of any vector format beyond a top-level `cases` list to count.
"""

import json
import os
import sys


def main(argv, prog, directory, render, report=None, strays=None):
    """Run a generator: argv as sys.argv; render() returns {path relative to
    directory: text}; report(files) prints what was written (default: each
    file's case count); strays(files) lists paths under directory that
    --check must refuse as written by no generator."""
    check = "--check" in argv[1:]
    if [a for a in argv[1:] if a != "--check"]:
        print("usage: %s [--check]" % prog, file=sys.stderr)
        return 2
    files = render()
    if check:
        bad = differing(directory, files)
        for path in bad:
            print("differs: %s" % os.path.relpath(path))
        unknown = strays(files) if strays else []
        for path in unknown:
            print("not generated: %s" % os.path.relpath(path))
        return 1 if bad or unknown else 0
    for name, text in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(text.encode("utf-8"))
    (report or print_cases)(files)
    return 0


def text(format, description, cases, **more):
    """A vector file of another format than the verdict vectors, as every
    generator writes one: `format`, `description`, any `more` members, then
    `cases`; two-space indentation, UTF-8 kept, a trailing newline."""
    doc = {"format": format, "description": description}
    doc.update(more)
    doc["cases"] = cases
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def differing(directory, files):
    """The paths whose committed bytes are not the rendered text (or missing)."""
    out = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as fh:
                have = fh.read()
        except OSError:
            have = None
        if have != text.encode("utf-8"):
            out.append(path)
    return out


def print_cases(files):
    for name, text in files.items():
        print("%s %d cases" % (name, len(json.loads(text)["cases"])))
