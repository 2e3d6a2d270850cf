#!/usr/bin/env python3
"""Checks the include direction between fleetsched's libraries, and file sizes.

Every C++ file of a library folder below may include headers of its own folder and of the
folders (or single headers) its row allows, and no other project header; some folders also
must not include certain third-party headers. Each row is one static library, so this is the
arrow the meson.build files promise: a wrong #include fails here, with the line, before it can
become a link-time dependency.

    scripts/check-includes.py [SOURCE_ROOT]

It also holds files to a size a reader can take in: no C++ file of these folders but tools/ (the
subcommands that generate fleets and load), and no Go or Python file anywhere in the repository
(the tracked ones when SOURCE_ROOT is a git checkout, else every one below it but build*/, .git,
vendor and the other SKIPPED_FOLDERS), is over MAX_LINES lines; a file that grows past it is
split along its sections. bench/README.md stays within BENCH_README_MAX_LINES: it holds the
targets, the latest numbers and the commands, and dated detail goes to bench/results/ or an
area's own README.

Exits 0 when every include is allowed and every file within its size, 1 listing each offending
line or file, 2 on a usage error. Run by `meson test` (the test include-direction).
"""
import os
import re
import subprocess
import sys

# Folder -> what its files may include besides their own folder: folders (anything below them)
# or single headers. In dependency order; a folder may only name folders above it.
ALLOWED = {
    # The process's logger: uses nothing, so any library that logs may include it.
    "log": [],
    "codec": [],
    "plugins": ["codec"],
    "cache": ["codec", "plugins"],
    # The C ABI for the in-process scheduler plugin: the decision modules, no IO.
    "capi": ["codec", "plugins", "cache"],
    # (codec's JSON writer for the exec plugin's KUBERNETES_EXEC_INFO: one JSON escaper)
    "apiclient": ["log", "codec/json_writer.h"],
    # The HTTP reactor: libuv, llhttp, libssl and the header-only byte buffer, no JSON.
    "engine/reactor": ["log", "codec/buffer.h"],
    # The extender verbs; ingestion is reached through service/binder.h, never included.
    "engine/service": ["log", "codec", "plugins", "cache", "engine/reactor"],
    # Watch -> cache and the binder's writes; of the service only the interface it implements.
    "engine/ingest": ["log", "codec", "cache", "apiclient", "engine/reactor/metrics.h",
                      "engine/service/binder.h"],
    "replay": ["codec", "plugins"],
    # Tools the binary serves as subcommands (gen-fleet, loadgen, null-extender), and the fake
    # kube-apiserver of loadgen's churn mode and bench/ingest.
    "tools/fleet": [],
    "tools/apiserver": ["tools/fleet/json_value.h"],
    "tools/loadgen": ["tools/fleet", "tools/apiserver"],
    "cmd": ["log", "codec", "plugins", "cache", "apiclient", "engine/reactor", "engine/service",
            "engine/ingest", "replay", "tools/fleet", "tools/apiserver", "tools/loadgen"],
}

# Third-party headers (by the first part of their path) a folder must not include.
FORBIDDEN_SYSTEM = {
    "codec": ["curl", "yaml-cpp", "uv.h"],
    "engine/reactor": ["simdjson", "simdjson.h", "curl", "yaml-cpp"],
    # kube-apiserver is reached through Binder; profiles come parsed (plugins/config.h).
    "engine/service": ["curl", "yaml-cpp"],
}

# Headers generated into the build folder, by the folder allowed to include them.
GENERATED = {
    "cmd": ["fleetsched_version.h"],
}

# Every C++ file below these must belong to a folder of ALLOWED.
CHECKED_ROOTS = ["log", "codec", "plugins", "cache", "capi", "apiclient", "engine", "replay", "tools", "cmd"]

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")
MAX_LINES = 800
LONG_FILES_ALLOWED_UNDER = ("tools/",)  # C++ only; Go and Python files have no exemption
SCRIPT_SUFFIXES = (".go", ".py")
# Folders the walk skips when SOURCE_ROOT is no git checkout: build*/ at the top, these anywhere.
SKIPPED_FOLDERS = {".git", "vendor", "subprojects", "__pycache__", "node_modules"}
BENCH_README = "bench/README.md"
BENCH_README_MAX_LINES = 200
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def owner(path):
    """The ALLOWED folder a repository path belongs to (the longest match), or None."""
    best = None
    for folder in ALLOWED:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def allowed(target, rules):
    return any(target == r or target.startswith(r + "/") for r in rules)


def source_files(root):
    """Repository-relative paths of the C++ files to check."""
    checked = set(CHECKED_ROOTS) | set(ALLOWED)
    for top in sorted(checked):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def script_files(root):
    """Repository-relative paths of the Go and Python files to hold to MAX_LINES: git's tracked
    files when root is a checkout, else a walk of the tree."""
    if os.path.exists(os.path.join(root, ".git")):
        try:
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.go", "*.py"],
                                 check=True, capture_output=True).stdout
            return sorted(p for p in out.decode("utf-8", "replace").split("\0")
                          if p and os.path.isfile(os.path.join(root, p)))
        except (OSError, subprocess.CalledProcessError):
            pass  # no git here: walk the tree instead
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        top = os.path.relpath(dirpath, root) == "."
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIPPED_FOLDERS and not (top and d.startswith("build")))
        for name in sorted(filenames):
            if name.endswith(SCRIPT_SUFFIXES):
                path = os.path.relpath(os.path.join(dirpath, name), root)
                paths.append(path.replace(os.sep, "/"))
    return paths


def count_lines(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def check_sizes(root):
    """Go and Python files over MAX_LINES, and bench/README.md over BENCH_README_MAX_LINES."""
    problems = []
    for path in script_files(root):
        n = count_lines(root, path)
        if n > MAX_LINES:
            problems.append(f"{path}: {n} lines, over {MAX_LINES}: split it along its sections")
    if os.path.isfile(os.path.join(root, BENCH_README)):
        n = count_lines(root, BENCH_README)
        if n > BENCH_README_MAX_LINES:
            problems.append(f"{BENCH_README}: {n} lines, over {BENCH_README_MAX_LINES}: "
                            "move detail to bench/results/ or the folder's own README")
    return problems


def check(root):
    problems = []
    seen = set()
    for path in source_files(root):
        if path in seen:
            continue
        seen.add(path)
        folder = owner(path)
        if folder is None:
            problems.append(f"{path}: not in a folder of the include table (scripts/check-includes.py)")
            continue
        rules = ALLOWED[folder]
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if len(lines) > MAX_LINES and not path.startswith(LONG_FILES_ALLOWED_UNDER):
            problems.append(f"{path}: {len(lines)} lines, over {MAX_LINES}: split it along its sections")
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            text = line.strip()
            if kind == "<":
                first = target.split("/")[0]
                if first in FORBIDDEN_SYSTEM.get(folder, []):
                    problems.append(f"{path}:{number}: {text}: {folder} must not use {first}")
                continue
            if owner(target) == folder:
                continue
            if not os.path.exists(os.path.join(root, target)):
                if os.path.exists(os.path.join(root, os.path.dirname(path), target)):
                    continue  # relative to the including file: its own folder
                if target in GENERATED.get(folder, []):
                    continue
                problems.append(f"{path}:{number}: {text}: not a header of the source tree")
                continue
            if not allowed(target, rules):
                may = ", ".join(rules) if rules else "nothing outside itself"
                problems.append(f"{path}:{number}: {text}: {folder} may not include it (may: {may})")
    return problems + check_sizes(root)


def main(argv):
    if len(argv) > 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: check-includes.py [SOURCE_ROOT]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-includes: {len(problems)} problem(s) (include direction, file size): "
              "see scripts/check-includes.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
