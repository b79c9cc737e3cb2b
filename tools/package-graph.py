#!/usr/bin/env python3
"""Checks that Package.swift's header draws the module graph the targets declare.

The header lists every target (test and fuzz targets aside) as `//     Name` or
`//     Name ◄ Dependency, Dependency`: the package's own targets it depends on. This reads
the targets from `swift package dump-package` and fails, naming each difference, when a target
is missing from the header or from the package, when its dependencies differ, or when a target
depends on one listed below it (the header is bottom to top: the layering must stay one way).

Usage: tools/package-graph.py [--check]   (prints the graph the package declares without it)
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_LINE = re.compile(r"^//     ([A-Za-z][\w-]*)(?: ◄ (.+))?$")


def declared():
    """Each target's own-package dependencies, from the manifest (in its order)."""
    dump = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    graph = {}
    for target in dump["targets"]:
        if target["type"] == "test" or target["name"].startswith("NavlogFuzz"):
            continue
        own = []
        for dependency in target.get("dependencies", []):
            entry = dependency.get("byName") or dependency.get("target")
            if entry:
                own.append(entry[0])
        graph[target["name"]] = sorted(own)
    return graph


def drawn():
    """Each target line of the header, in order: (name, sorted dependencies, line number)."""
    lines = []
    with open(os.path.join(ROOT, "Package.swift")) as manifest:
        for number, line in enumerate(manifest, 1):
            if line.startswith("import PackageDescription"):
                break
            match = TARGET_LINE.match(line.rstrip("\n"))
            if match:
                dependencies = [name.strip() for name in (match.group(2) or "").split(",") if name.strip()]
                lines.append((match.group(1), sorted(dependencies), number))
    return lines


def main():
    graph = declared()
    if "--check" not in sys.argv[1:]:
        for name, dependencies in graph.items():
            print("//     %s%s" % (name, " ◄ " + ", ".join(dependencies) if dependencies else ""))
        return 0
    problems = []
    header = drawn()
    position = {}
    for name, dependencies, number in header:
        if name in position:
            problems.append("Package.swift:%d lists %s a second time" % (number, name))
        position[name] = number
        if name not in graph:
            problems.append("Package.swift:%d lists %s, which is no target of the package" % (number, name))
        elif graph[name] != dependencies:
            problems.append("Package.swift:%d says %s depends on [%s]; its target says [%s]"
                            % (number, name, ", ".join(dependencies), ", ".join(graph[name])))
    for name, dependencies, number in header:
        for dependency in dependencies:
            if dependency in position and position[dependency] > number:
                problems.append("Package.swift:%d: %s depends on %s, which the header lists below it (line %d): the graph is drawn bottom to top"
                                % (number, name, dependency, position[dependency]))
    for name in graph:
        if name not in position:
            problems.append("target %s is missing from Package.swift's header; add the line: //     %s%s"
                            % (name, name, " ◄ " + ", ".join(graph[name]) if graph[name] else ""))
    for problem in problems:
        print("package-graph: " + problem, file=sys.stderr)
    if problems:
        print("package-graph: make Package.swift's header draw the targets as they are (tools/package-graph.py prints them)", file=sys.stderr)
        return 1
    print("package-graph: the header draws all %d targets as Package.swift declares them" % len(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
