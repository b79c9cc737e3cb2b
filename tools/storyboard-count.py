#!/usr/bin/env python3
"""Count the scenes and segues of .storyboard files, independently of navlog's Swift parser.

The NavlogStoryboard tests compare these counts with what the Swift parser builds, file by
file and kind by kind, so this script is written from the rules, not from the Swift code,
and with a different method (a DOM walk with xml.etree rather than SAX callbacks):

- A scene is a view-controller element directly under <scene><objects>: an element whose
  name ends in "Controller" (viewController, tableViewController, navigationController,
  hostingController, ...) or is viewControllerPlaceholder (a storyboard reference). The other
  top-level objects are not scenes: <placeholder> (first responder), <exit>, gesture
  recognizers, <searchDisplayController> (a helper object, not a view controller), views.
- A segue is a <segue> element inside a <scene> that has a kind, except <segue reference=...>
  tie-breakers (under <inferredMetricsTieBreakers>) and segues nested inside another segue
  (3D Touch commit/preview variants, which carry key= and no kind).

Usage:
    tools/storyboard-count.py FILE...          a table: file, scenes, segues, segues by kind
    tools/storyboard-count.py --json FILE...   {"<path>": {"scenes": {element: n},
                                                "segues": {kind: n},
                                                "ignored": {"reference": n, "nested": n}}}
"""

import json
import sys
import xml.etree.ElementTree as ET

NOT_CONTROLLERS = {"searchDisplayController"}


def is_scene_controller(element):
    tag = element.tag
    if tag in NOT_CONTROLLERS:
        return False
    return tag == "viewControllerPlaceholder" or tag.endswith("Controller")


def count(path):
    root = ET.parse(path).getroot()
    if root.tag != "document":
        raise ValueError(f"{path}: the root element is <{root.tag}>, not <document>")
    scenes = {}
    segues = {}
    ignored = {"reference": 0, "nested": 0}

    def walk(element, in_scene, in_segue):
        for child in element:
            if child.tag == "segue":
                if child.get("reference") is not None:
                    ignored["reference"] += 1
                elif in_segue:
                    ignored["nested"] += 1
                elif in_scene and child.get("kind"):
                    kind = child.get("kind")
                    segues[kind] = segues.get(kind, 0) + 1
                walk(child, in_scene, True)
            else:
                walk(child, in_scene or child.tag == "scene", in_segue)

    for scene in root.iter("scene"):
        objects = scene.find("objects")
        if objects is None:
            continue
        for child in objects:
            if is_scene_controller(child):
                scenes[child.tag] = scenes.get(child.tag, 0) + 1
    walk(root, False, False)
    return {"scenes": scenes, "segues": segues, "ignored": ignored}


def main(argv):
    as_json = "--json" in argv
    paths = [arg for arg in argv if arg != "--json"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    results = {}
    failed = False
    for path in paths:
        try:
            results[path] = count(path)
        except (ET.ParseError, OSError, ValueError) as error:
            print(f"storyboard-count: {path}: {error}", file=sys.stderr)
            failed = True
    if as_json:
        json.dump(results, sys.stdout, sort_keys=True)
        sys.stdout.write("\n")
    else:
        for path, result in results.items():
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(result["segues"].items(), key=lambda item: (-item[1], item[0])))
            print(f"{path}\t{sum(result['scenes'].values())}\t{sum(result['segues'].values())}\t{kinds}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
