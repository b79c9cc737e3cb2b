#!/usr/bin/env python3
"""Writes the viewer's anomaly guide (Sources/NavlogServe/Web/anomaly-guide.json) from
docs/anomalies.md, so that the explanation the web viewer shows under an anomaly is the one the
docs give. `--check` exits 1 when the committed guide differs from the docs (tools/test runs it).
"""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
docs = (root / "docs" / "anomalies.md").read_text(encoding="utf-8")
target = root / "Sources" / "NavlogServe" / "Web" / "anomaly-guide.json"


def clean(text):
    text = re.sub(r"\s+", " ", text).strip()
    text = text.replace("**", "").replace("`", "")
    return text


guide = {}
sections = re.split(r"^### ", docs.split("## The codes", 1)[1], flags=re.M)[1:]
for section in sections:
    heading, _, body = section.partition("\n")
    codes = re.findall(r"A(\d+) `([a-z-]+)`", heading)
    rules = re.search(r"\(([^)]*)\)\s*$", heading)
    # Bulleted parts: "- **Evidence**: ...", "- **Example**: ...", "- **Fix**: ..." (continuation lines indented).
    parts = {}
    for match in re.finditer(r"^- \*\*(\w+)\*\*,?([^\n]*(?:\n(?!- \*\*)[^\n]*)*)", body, flags=re.M):
        parts[match.group(1).lower()] = clean(match.group(2).lstrip(":, "))
    intro = clean(body.split("\n- **", 1)[0]) if not body.lstrip().startswith("- **") else ""
    for number, name in codes:
        pieces = [intro]
        if parts.get("example"):
            pieces.append("Example: " + parts["example"])
        if parts.get("evidence"):
            pieces.append("navlog reports it on this evidence: " + parts["evidence"])
        explanation = " ".join(piece for piece in pieces if piece)
        guide[f"A{number}"] = {
            "name": name,
            "rules": rules.group(1) if rules else None,
            "explanation": explanation,
            "fix": parts["fix"][:1].upper() + parts["fix"][1:] if parts.get("fix") else None,
        }

text = json.dumps(guide, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
if "--check" in sys.argv:
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        print(f"tools/anomaly-guide.py: {target.relative_to(root)} differs from docs/anomalies.md; run tools/anomaly-guide.py", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
target.write_text(text, encoding="utf-8")
print(f"wrote {target.relative_to(root)} ({len(guide)} codes)")
