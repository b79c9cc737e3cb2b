#!/usr/bin/env python3
"""Check a JSON Lines file of navlog events against schemas/event-line.schema.json.

Usage: python3 tools/schema-check.py FILE

FILE is read as bytes and split on b"\\n"; lines are numbered from 1. A trailing
b"\\r" is dropped. Lines that are empty or only JSON white space (space, tab)
print nothing. Every other line prints one JSON object to stdout:

    {"line": N, "ok": true}
    {"line": N, "ok": true, "hello": true}            (a transport hello line)
    {"line": N, "ok": false, "reason": "...", "field": "vc.class", "kind": "missing"}

`field` is the offending field's path (`vc`, `vc.class`, `vcs[2]`, `vcs[1].id`,
`anchor.sourceRect.height`) or `-`; `kind` is one of json, utf8, not-object,
too-long, duplicate-key, unknown-type, missing, type, enum, range,
unknown-field, empty, version, timestamp (the vocabulary of
Tests/Fixtures/corpus/bad.expected).

The byte-level rules of schemas/README.md are applied before the schema:
length <= 65536 bytes, strict UTF-8, one RFC 8259 JSON value (no NaN/Infinity),
no duplicate keys, no lone surrogates, top level is an object, session <= 128
bytes of UTF-8. Exit status is 0, or 2 if FILE cannot be read.

Needs jsonschema 4.x (and rfc3339-validator so that "date-time" is checked).
"""

import json
import os
import re
import sys

from jsonschema import Draft202012Validator, FormatChecker

MAX_LINE_BYTES = 65536
MAX_SESSION_BYTES = 128
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "schemas", "event-line.schema.json")


class Rejection(Exception):
    def __init__(self, kind, field, reason):
        super().__init__(reason)
        self.kind = kind
        self.field = field
        self.reason = reason


class _DupDict(dict):
    """A dict built from pairs that repeated a key; remembers the first repeated key."""
    dup_key = None


def _pairs_hook(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            d = _DupDict(pairs)
            d.dup_key = k
            return d
        seen.add(k)
    return dict(pairs)


def _parse_constant(name):
    raise ValueError("not a JSON number: " + name)


def _format_path(parts):
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        else:
            out += ("." if out else "") + str(p)
    return out or "-"


def _walk(value, path):
    """Yield (path, kind) problems: duplicate keys and lone surrogates, depth first, in document order."""
    if isinstance(value, dict):
        if isinstance(value, _DupDict):
            yield path + [value.dup_key], "duplicate-key"
        for k, v in value.items():
            try:
                k.encode("utf-8")
            except UnicodeEncodeError:
                yield path, "utf8"
            yield from _walk(v, path + [k])
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + [i])
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            yield path, "utf8"


def _first_extra_key(instance, schema):
    props = schema.get("properties", {})
    pats = [re.compile(p) for p in schema.get("patternProperties", {})]
    for k in instance:
        if k not in props and not any(p.search(k) for p in pats):
            return k
    return None


def _classify(err):
    """Map one jsonschema error to (kind, path list)."""
    path = list(err.absolute_path)
    kw = err.validator
    if kw == "anyOf" and err.context and all(c.validator == "required" for c in err.context):
        # tab.select: neither index nor vc -> report the first alternative
        return _classify(sorted(err.context, key=lambda c: c.schema_path[0] if c.schema_path else 0)[0])
    if kw in ("anyOf", "oneOf") and err.context:
        best = sorted(err.context, key=lambda c: -len(c.absolute_path))[0]
        return _classify(best)
    if kw == "required":
        missing = next((r for r in err.validator_value if r not in err.instance), None)
        return "missing", path + [missing]
    if kw in ("additionalProperties", "unevaluatedProperties"):
        extra = _first_extra_key(err.instance, err.schema)
        return "unknown-field", path + ([extra] if extra is not None else [])
    if kw == "enum":
        return ("unknown-type" if path == ["type"] else "enum"), path
    if kw == "const":
        return ("version" if path == ["v"] else "enum"), path
    if kw == "type":
        return "type", path
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxLength"):
        return "range", path
    if kw == "minLength":
        return "empty", path
    if kw in ("pattern", "format"):
        return "timestamp", path
    return kw, path


class Checker:
    def __init__(self, schema_path=SCHEMA_PATH):
        with open(schema_path, "rb") as f:
            schema = json.loads(f.read().decode("utf-8"))
        Draft202012Validator.check_schema(schema)
        self.validator = Draft202012Validator(schema, format_checker=FormatChecker())

    def check_line(self, raw):
        """Check one line (bytes without its b"\\n"). Returns None for a skipped line, else a result dict."""
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip(b" \t\r\n"):
            return None
        try:
            return self._check(raw)
        except Rejection as r:
            return {"ok": False, "reason": r.reason, "field": r.field, "kind": r.kind}

    def _check(self, raw):
        if len(raw) > MAX_LINE_BYTES:
            raise Rejection("too-long", "-", "line is %d bytes, more than %d" % (len(raw), MAX_LINE_BYTES))
        try:
            text = raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError as e:
            raise Rejection("utf8", "-", "invalid UTF-8 at byte %d" % e.start)
        try:
            value = json.loads(text, parse_constant=_parse_constant, object_pairs_hook=_pairs_hook)
        except (ValueError, RecursionError) as e:
            raise Rejection("json", "-", "invalid JSON: %s" % e)
        for path, kind in _walk(value, []):
            if kind == "utf8":
                raise Rejection("utf8", "-", "lone surrogate in a string at %s" % _format_path(path))
            raise Rejection(kind, _format_path(path), "duplicate key %s" % _format_path(path))
        if not isinstance(value, dict):
            raise Rejection("not-object", "-", "line is a JSON %s, not an object" % type(value).__name__)
        if "hello" in value:
            return {"ok": True, "hello": True}
        session = value.get("session")
        if isinstance(session, str) and len(session.encode("utf-8")) > MAX_SESSION_BYTES:
            raise Rejection("range", "session", "session is %d bytes of UTF-8, more than %d"
                            % (len(session.encode("utf-8")), MAX_SESSION_BYTES))
        errors = list(self.validator.iter_errors(value))
        if not errors and isinstance(value.get("ts"), str):
            # Like the integer form: 1970-01-01T00:00:00Z up to year 9999 (the schema's
            # date-time format cannot say so).
            micros = _rfc3339_micros(value["ts"])
            if micros is not None and not (0 <= micros <= 253402300799999999):
                raise Rejection("range", "ts", "ts %s is outside 1970-01-01T00:00:00Z to year 9999" % value["ts"])
        if errors:
            # Deterministic choice: shallowest path first, then the path's text, then a type
            # error before any other error at the same place.
            errors.sort(key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path],
                                       0 if e.validator == "type" else 1))
            err = errors[0]
            kind, path = _classify(err)
            field = _format_path(path)
            raise Rejection(kind, field, "%s %s: %s" % (field, kind, err.message))
        return {"ok": True}


_RFC3339 = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")


def _rfc3339_micros(text):
    """µs since the epoch of an RFC 3339 date-time (leap second 60 counted as 59 + 1 s), or None."""
    m = _RFC3339.match(text)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    fraction = m.group(7)
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    days = _days_from_civil(year, month, day)
    seconds = days * 86400 + hour * 3600 + minute * 60 + second
    zone = m.group(8)
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1000000 + micros


def _days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: schema-check.py FILE\n")
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = f.read()
    except OSError as e:
        sys.stderr.write("schema-check: cannot read %s: %s\n" % (argv[1], e))
        return 2
    checker = Checker()
    out = sys.stdout
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        res = checker.check_line(raw)
        if res is None:
            continue
        rec = {"line": n}
        rec.update(res)
        out.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
