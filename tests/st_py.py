"""A tiny safetensors reader/writer for the reference tests (no third-party
safetensors package): json + struct + numpy, tensors handed out as torch.

File layout: u64 little-endian header length N, N bytes of JSON header
({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}}),
then the data bytes; offsets are relative to the end of the header.
"""
import json
import struct

import numpy as np
import torch

_NP = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
    "BOOL": np.bool_,
}
_TORCH = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}


def load(path, with_metadata=False):
    """Returns {name: torch.Tensor} (and the metadata dict if asked)."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"{path}: header length {n} past the end of the file")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, info in header.items():
        dt = info["dtype"]
        if dt not in _NP:
            raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {dt}")
        begin, end = info["data_offsets"]
        shape = [int(s) for s in info["shape"]]
        npdt = np.dtype(_NP[dt]).newbyteorder("<")
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * npdt.itemsize or end > len(data):
            raise ValueError(f"{path}: tensor '{name}' offsets {begin}..{end} do not fit")
        arr = np.frombuffer(data, dtype=npdt, count=count, offset=begin).astype(_NP[dt]).reshape(shape)
        out[name] = torch.from_numpy(arr.copy())
    return (out, meta) if with_metadata else out


def save(path, tensors, metadata=None):
    """Writes {name: torch.Tensor or numpy array}; header padded with spaces to 8 bytes."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        t = tensors[name]
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous()
            dt = _TORCH[t.dtype]
            arr = t.numpy()
        else:
            arr = np.ascontiguousarray(t)
            dt = next(k for k, v in _NP.items() if np.dtype(v) == arr.dtype)
        b = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
