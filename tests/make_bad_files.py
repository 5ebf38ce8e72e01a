"""Writes the bad inputs of tests/reliability_test.sh into a folder: corrupt
checkpoints made from a good one (raw bytes edited with json + struct, so the
test needs nothing beyond Python's standard library).
usage: make_bad_files.py GOOD.safetensors OUTDIR"""
import json, os, struct, sys

good, out = sys.argv[1], sys.argv[2]
raw = open(good, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]


def write(name, hdr, body, length=None):
    h = json.dumps(hdr).encode()
    h += b" " * (-(8 + len(h)) % 8)
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(h) if length is None else length) + h + body)


def edited(fn):
    h = json.loads(json.dumps(header))
    fn(h)
    return h


open(os.path.join(out, "truncated.safetensors"), "wb").write(raw[: len(raw) // 2])
open(os.path.join(out, "not_safetensors.safetensors"), "wb").write(b"PK\x03\x04 this is a zip file, not a checkpoint" * 4)
write("header_past_end.safetensors", header, data, length=len(raw) * 4)
write("offsets_out_of_range.safetensors",
      edited(lambda h: h["net.4.bias"].__setitem__("data_offsets", [len(data) - 4, len(data) + 4])), data)
def overlap(h):
    a, b = h["net.0.bias"]["data_offsets"]
    h["net.2.bias"]["data_offsets"] = [a, b]
write("offsets_overlap.safetensors", edited(overlap), data)
def i32(h):
    # the same bytes read as I32 (F64 would load: a checkpoint of either precision converts)
    h["net.4.bias"]["dtype"] = "I32"
write("wrong_dtype.safetensors", edited(i32), data)
write("unknown_dtype.safetensors", edited(lambda h: h["net.0.bias"].__setitem__("dtype", "F23")), data)
write("tensor_missing.safetensors", edited(lambda h: h.pop("net.2.weight")), data)
