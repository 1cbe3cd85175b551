#!/usr/bin/env python3
"""A strict, independent reader of TensorBoard event files (standard library only).

Checks, and exits non-zero naming the file, record and field on the first violation:
  - TFRecord framing: uint64 length, uint32 masked CRC-32C of the 8 length bytes, data,
    uint32 masked CRC-32C of the data (both CRCs recomputed here, with a table built from
    the Castagnoli polynomial 0x82F63B78, not taken from zerotrain);
  - the first event carries file_version "brain.Event:2" and nothing but wall_time/step;
  - every field number and wire type against TensorBoard's protos
    (tensorboard/compat/proto/event.proto and summary.proto):
      Event:   1 wall_time double (wire 1), 2 step int64 (wire 0), 3 file_version string
               (wire 2), 5 summary Summary (wire 2)
      Summary: 1 value Value (wire 2, repeated)
      Value:   1 tag string (wire 2), 2 simple_value float (wire 5)
    anything else is an error (zerotrain writes nothing else);
  - wall times are positive and do not go backwards, steps do not go backwards.
Prints {"file_version": ..., "scalars": {tag: [[step, value], ...]}} as JSON.

usage: tb_reader.py EVENT_FILE
"""
import json
import struct
import sys


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = _table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class Bad(Exception):
    pass


def varint(buf, i):
    shift = result = 0
    while True:
        if i >= len(buf):
            raise Bad("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise Bad("varint longer than 10 bytes")


def fields(buf, allowed, what):
    """Yields (field, value) for a message whose fields must be in allowed {field: wire}."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if allowed.get(field) != wire:
            raise Bad(f"{what}: field {field} with wire type {wire} is not in TensorBoard's proto as written")
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            if i + 8 > len(buf):
                raise Bad(f"{what}: truncated fixed64")
            v, i = buf[i:i + 8], i + 8
        elif wire == 5:
            if i + 4 > len(buf):
                raise Bad(f"{what}: truncated fixed32")
            v, i = buf[i:i + 4], i + 4
        else:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise Bad(f"{what}: length {n} runs past the message")
            v, i = buf[i:i + n], i + n
        yield field, v


def records(data):
    i = 0
    while i < len(data):
        if i + 12 > len(data):
            raise Bad(f"record at byte {i}: truncated header")
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        (crc,) = struct.unpack("<I", data[i + 8:i + 12])
        if crc != masked(head):
            raise Bad(f"record at byte {i}: length CRC {crc:#010x} != {masked(head):#010x}")
        body = data[i + 12:i + 12 + n]
        if len(body) != n or i + 16 + n > len(data):
            raise Bad(f"record at byte {i}: truncated data")
        (crc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        if crc != masked(body):
            raise Bad(f"record at byte {i}: data CRC {crc:#010x} != {masked(body):#010x}")
        yield i, body
        i += 16 + n


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    out = {"file_version": None, "scalars": {}}
    last_wall, last_step = 0.0, -1
    for k, (at, body) in enumerate(records(data)):
        where = f"{path}: event {k} (byte {at})"
        ev = {}
        for field, v in fields(body, {1: 1, 2: 0, 3: 2, 5: 2}, where):
            if field in ev:
                raise Bad(f"{where}: field {field} repeated")
            ev[field] = v
        wall = struct.unpack("<d", ev.get(1, b"\0" * 8))[0]
        if not wall > 0 or wall < last_wall:
            raise Bad(f"{where}: wall_time {wall} is not positive and non-decreasing")
        last_wall = wall
        if k == 0:
            if ev.get(3) != b"brain.Event:2" or 5 in ev:
                raise Bad(f"{where}: the first event must be file_version brain.Event:2 alone, got {ev}")
            out["file_version"] = ev[3].decode()
            continue
        if 3 in ev or 5 not in ev:
            raise Bad(f"{where}: expected a summary event")
        step = ev.get(2, 0)
        if step < last_step:
            raise Bad(f"{where}: step {step} after {last_step}")
        last_step = step
        for _, value in fields(ev[5], {1: 2}, where + " summary"):
            val = dict(fields(value, {1: 2, 2: 5}, where + " value"))
            if 1 not in val or 2 not in val:
                raise Bad(f"{where}: a value without tag or simple_value")
            tag = val[1].decode("utf-8")
            out["scalars"].setdefault(tag, []).append([step, struct.unpack("<f", val[2])[0]])
    if out["file_version"] is None:
        raise Bad(f"{path}: empty file")
    return out


if __name__ == "__main__":
    try:
        print(json.dumps(read(sys.argv[1])))
    except Bad as e:
        sys.exit(f"tb_reader: {e}")
