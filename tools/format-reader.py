#!/usr/bin/env python3
"""Reads a navlog data directory from docs/FORMAT.md alone and prints its events as JSON Lines,
as `navlog cat` does (a second, independent reader: the test that runs it proves the document
is enough to read the log without navlog's code).

    tools/format-reader.py DATA_DIR [--format-doc docs/FORMAT.md] [--check-seek-tables]

The event type and field code tables are taken from the document itself, so the document must
stay true for the reader to work. zstd frames are decompressed with the zstd command-line tool
(Debian's `zstd`); CRC-32C is computed here. Damaged or partial blocks end the segment's
reading with a message on standard error and exit status 1.
"""
import json
import os
import re
import struct
import subprocess
import sys


def crc32c(data):
    # Castagnoli polynomial, reflected (0x82F63B78), table-driven.
    table = crc32c.table
    crc = 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


crc32c.table = _table()


def code_table(doc, heading):
    """The `| code | name |` rows under a heading of FORMAT.md."""
    section = doc.split(heading, 1)[1].split("\n#", 1)[0]
    return {int(code): name for code, name in re.findall(r"^\| (\d+) \| `([^`]+)` \|$", section, re.M)}


class Reader:
    def __init__(self, data, offset=0):
        self.data = data
        self.offset = offset

    def byte(self):
        value = self.data[self.offset]
        self.offset += 1
        return value

    def varint(self):
        shift = 0
        value = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def zigzag(self):
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def take(self, count):
        chunk = self.data[self.offset:self.offset + count]
        if len(chunk) != count:
            raise ValueError("truncated")
        self.offset += count
        return chunk


def zstd_decompress(frame):
    return subprocess.run(["zstd", "-d", "-c", "-q"], input=frame, stdout=subprocess.PIPE, check=True).stdout


def json_string(raw):
    return json.dumps(raw.decode("utf-8"), ensure_ascii=False)


def value_json(reader, strings, fields, out):
    tag = reader.byte()
    if tag in (1, 2):
        count = reader.varint()
        out.append("{" if tag == 1 else "[")
        for index in range(count):
            if index:
                out.append(",")
            if tag == 1:
                key_json(reader, strings, fields, out)
            value_json(reader, strings, fields, out)
        out.append("}" if tag == 1 else "]")
    elif tag == 3:
        out.append(json_string(strings[reader.varint()]))
    elif tag == 4:
        out.append(str(reader.zigzag()))
    elif tag == 5:
        out.append(strings[reader.varint()].decode("utf-8"))
    elif tag in (6, 7, 8):
        out.append({6: "true", 7: "false", 8: "null"}[tag])
    else:
        raise ValueError("unknown value tag %d" % tag)


def key_json(reader, strings, fields, out):
    key = reader.byte()
    name = strings[reader.varint()].decode("utf-8") if key == 0x80 else fields[key]
    out.append(json.dumps(name, ensure_ascii=False) + ":")


def read_block(segment, offset, types, fields, lines):
    """Reads the block at `offset`; returns the offset after it, or None at the end."""
    if offset + 8 > len(segment):
        return None
    magic, size = struct.unpack_from("<II", segment, offset)
    if magic != 0x184D2A5B:
        return None  # the seek table, or the end
    header = segment[offset + 8:offset + 8 + size]
    if len(header) != size or crc32c(header[:-4]) != struct.unpack_from("<I", header, size - 4)[0]:
        raise ValueError("block header at %d is damaged or partial" % offset)
    block_magic, version = struct.unpack_from("<IB", header, 0)
    if block_magic != 0x4B4C424E or version not in (1, 2):
        raise ValueError("not a navlog block at %d" % offset)
    first_lsn, count, frame_size, payload_size, frame_crc = struct.unpack_from("<QIIII", header, 8)
    min_ts, max_ts, min_recv, max_recv = struct.unpack_from("<qqqq", header, 32)
    filter_size, frame_count = struct.unpack_from("<HB", header, 64)
    # Version 2: the frame table after the session filter (a grouped block).
    frame_table = [struct.unpack_from("<III", header, 68 + filter_size + 12 * i) for i in range(frame_count)]
    frame = segment[offset + 8 + size:offset + 8 + size + frame_size]
    if len(frame) != frame_size or crc32c(frame) != frame_crc:
        raise ValueError("data frame of the block at %d is damaged or partial" % offset)
    payload = zstd_decompress(frame)
    if len(payload) != payload_size:
        raise ValueError("payload of the block at %d has the wrong size" % offset)
    if version == 2:
        read_grouped(payload, frame_table, first_lsn, count, min_ts, min_recv, types, fields, lines, offset)
        return offset + 8 + size + frame_size
    r = Reader(payload)
    payload_version = r.byte()
    if payload_version not in (1, 2, 5) or r.varint() != count:
        raise ValueError("payload of the block at %d is malformed" % offset)
    string_count = r.varint()
    lengths = [r.varint() for _ in range(string_count)]
    strings = [r.take(length) for length in lengths]
    kinds = list(r.take(count))
    sessions = [r.varint() for _ in range(count)]
    last_ts = {}
    times = []
    for session in sessions:
        value = last_ts.get(session, min_ts) + r.zigzag()
        last_ts[session] = value
        times.append(value)
    last_seq = {}
    sequences = []
    for session in sessions:
        raw = r.varint()
        if raw == 0:
            sequences.append(None)
            continue
        delta = ((raw - 1) >> 1) ^ -((raw - 1) & 1)
        value = last_seq.get(session, 0) + delta
        last_seq[session] = value
        sequences.append(value)
    received = []
    last = min_recv
    for _ in range(count):
        last += r.zigzag()
        received.append(last)
    r.take(count)  # flags
    peers = read_peers(r, payload_version == 5)
    peer_of = [r.varint() for _ in range(count)]
    # Version 1 wrote each body's length; version 2 does not (a body is one value: it ends itself).
    body_lengths = [r.varint() for _ in range(count)] if payload_version == 1 else None
    body_reader = r
    for i in range(count):
        body = Reader(r.take(body_lengths[i])) if body_lengths is not None else body_reader
        out = ['{"type":', json.dumps(types[kinds[i]]), ',"session":', json_string(strings[sessions[i]]), ',"ts":', str(times[i])]
        if sequences[i] is not None:
            out.append(',"seq":%d' % sequences[i])
        if body.byte() != 1:
            raise ValueError("a body is not an object")
        for _ in range(body.varint()):
            out.append(",")
            key_json(body, strings, fields, out)
            value_json(body, strings, fields, out)
        out.append(trusted_fields(first_lsn + i, received[i], peers[peer_of[i]]))
        lines.append("".join(out))
    if body_lengths is None and r.offset != len(payload):
        raise ValueError("the bodies of the block at %d do not fill its payload" % offset)
    return offset + 8 + size + frame_size


def read_peers(r, with_keys):
    """The peer table: uid, gid, zigzag pid; payload versions 5 and 6 add a relay key id (length, bytes)."""
    peers = []
    for _ in range(r.varint()):
        uid, gid, pid = r.varint(), r.varint(), r.zigzag()
        key = r.take(r.varint()).decode("ascii") if with_keys else ""
        peers.append((uid, gid, pid, key))
    return peers


def trusted_fields(lsn, received, peer):
    uid, gid, pid, key = peer
    text = ',"_lsn":%d,"_recv":%d,"_uid":%d,"_gid":%d,"_pid":%d' % (lsn, received, uid, gid, pid)
    if key:
        text += ',"_key":' + json.dumps(key)
    return text + "}"


def read_grouped(payload, frame_table, first_lsn, count, min_ts, min_recv, types, fields, lines, offset):
    """A grouped block (payload version 4, 6 or 3): the spine, then one part per session group."""
    r = Reader(payload[:frame_table[0][1]])
    version = r.byte()
    if version not in (3, 4, 6) or r.varint() != count or r.varint() != len(frame_table) - 1:
        raise ValueError("the spine of the block at %d is malformed" % offset)
    groups = len(frame_table) - 1
    session_ids = [r.varint() for _ in range(r.varint())]
    session_ids = [r.take(length) for length in session_ids]
    group_of = list(r.take(len(session_ids)))
    if version == 3:
        sessions = [r.varint() for _ in range(count)]
    else:
        # Each event's group here; its session from the group part's own session numbers.
        event_group = list(r.take(count))
        sessions = [None] * count
    received = []
    last = min_recv
    for _ in range(count):
        last += r.zigzag()
        received.append(last)
    peers = read_peers(r, version == 6)
    peer_of = [r.varint() for _ in range(count)]
    events = [None] * count
    last_ts, last_seq = {}, {}
    start = frame_table[0][1]
    for group in range(groups):
        part_size = frame_table[1 + group][1]
        if part_size == 0:
            continue
        g = Reader(payload[start:start + part_size])
        start += part_size
        lengths = [g.varint() for _ in range(g.varint())]
        strings = [g.take(length) for length in lengths]
        if version in (4, 6):
            # The k-th of the group's sessions in order of session number has its own number k.
            own = [number for number in range(len(session_ids)) if group_of[number] == group]
            for i in range(count):
                if event_group[i] == group:
                    sessions[i] = own[g.varint()]
        # Session-major: the group's sessions in order of number, each one's events in log order.
        members = sorted((i for i in range(count) if sessions[i] is not None and group_of[sessions[i]] == group), key=lambda i: (sessions[i], i))
        kinds = list(g.take(len(members)))
        times = []
        for i in members:
            value = last_ts.get(sessions[i], min_ts) + g.zigzag()
            last_ts[sessions[i]] = value
            times.append(value)
        sequences = []
        for i in members:
            raw = g.varint()
            if raw == 0:
                sequences.append(None)
                continue
            value = last_seq.get(sessions[i], 0) + (((raw - 1) >> 1) ^ -((raw - 1) & 1))
            last_seq[sessions[i]] = value
            sequences.append(value)
        g.take(len(members))  # flags
        for _ in set(sessions[i] for i in members):
            g.varint()  # the byte length of each session's bodies (for a reader of one session)
        for k, i in enumerate(members):
            out = ['{"type":', json.dumps(types[kinds[k]]), ',"session":', json_string(session_ids[sessions[i]]), ',"ts":', str(times[k])]
            if sequences[k] is not None:
                out.append(',"seq":%d' % sequences[k])
            if g.byte() != 1:
                raise ValueError("a body is not an object")
            for _ in range(g.varint()):
                out.append(",")
                key_json(g, strings, fields, out)
                value_json(g, strings, fields, out)
            out.append(trusted_fields(first_lsn + i, received[i], peers[peer_of[i]]))
            events[i] = "".join(out)
        if g.offset != len(g.data):
            raise ValueError("the bodies of session group %d of the block at %d do not fill its part" % (group, offset))
    if any(event is None for event in events):
        raise ValueError("the groups of the block at %d do not hold every event" % offset)
    lines.extend(events)


def check_seek_table(segment, block_sizes):
    """Checks a sealed segment's seek table against the blocks read; returns whether it has one."""
    if len(segment) < 9:
        return False
    frames, descriptor, magic = struct.unpack_from("<IBI", segment, len(segment) - 9)
    if magic != 0x8F92EAB1:
        return False
    start = len(segment) - 9 - frames * 8 - 8
    skippable, size = struct.unpack_from("<II", segment, start)
    assert skippable == 0x184D2A5E and size == frames * 8 + 9, "seek table frame header"
    entries = [struct.unpack_from("<II", segment, start + 8 + 8 * i) for i in range(frames)]
    assert [compressed for compressed, _ in entries] == [size for size, _ in block_sizes], "seek table sizes"
    assert [decompressed for _, decompressed in entries] == [payload for _, payload in block_sizes], "seek table payload sizes"
    return True


def main():
    args = sys.argv[1:]
    doc_path = os.path.join(os.path.dirname(__file__), "..", "docs", "FORMAT.md")
    if "--format-doc" in args:
        doc_path = args[args.index("--format-doc") + 1]
    check_tables = "--check-seek-tables" in args
    data_dir = args[0]
    doc = open(doc_path, encoding="utf-8").read()
    types = code_table(doc, "### Event type codes")
    fields = code_table(doc, "### Field codes")
    segments = sorted(name for name in os.listdir(data_dir) if re.fullmatch(r"\d{20}\.zst", name))
    status = 0
    sealed = 0
    for name in segments:
        segment = open(os.path.join(data_dir, name), "rb").read()
        lines = []
        offset = 0
        sizes = []
        try:
            while True:
                following = read_block(segment, offset, types, fields, lines)
                if following is None:
                    break
                payload_size = struct.unpack_from("<I", segment, offset + 8 + 24)[0]
                sizes.append((following - offset, payload_size))
                offset = following
        except ValueError as error:
            print("format-reader: %s: %s" % (name, error), file=sys.stderr)
            status = 1
        sys.stdout.write("".join(line + "\n" for line in lines))
        if check_tables and check_seek_table(segment, sizes):
            sealed += 1
    if check_tables:
        print("format-reader: %d segment(s), %d sealed with a seek table that matches their blocks" % (len(segments), sealed), file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
