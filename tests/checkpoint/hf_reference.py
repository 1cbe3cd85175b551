#!/usr/bin/python3
"""HuggingFace interop check for zerotrain's exported GPT-2 (test-only; never a runtime dependency).

Usage: hf_reference.py WORKDIR
Reads WORKDIR/hf/model.safetensors and WORKDIR/hf/config.json (zerotrain's export) with a
safetensors reader written here from the format's description, and checks everything a
HuggingFace loader relies on: the u64 little-endian header length, a header padded with
spaces to a multiple of 8, JSON without duplicate keys, {"format": "pt"} metadata, F32
tensors whose data_offsets tile the buffer from 0 to the end of file (no holes, no
overlap), 4-byte aligned data, HuggingFace's GPT-2 names without "transformer." and its
shapes (Conv1D weights [in, out]). Then builds GPT-2 in PyTorch *by name* in Conv1D form
(y = x @ W + b), runs WORKDIR/zt.safetensors's tokens and compares with zerotrain's
logits: max |torch - zt| / max |torch| <= 1e-5.
Finally writes WORKDIR/variant/: the same weights named "transformer.*", with the causal
mask buffers h.N.attn.bias and a tied lm_head.weight, as other GPT-2 files carry them.
Prints "max_rel_logits <x>"; exit status 1 with a message on any failed check, 3 when
torch is missing (the C++ test turns that into a failure).
"""
import json
import math
import os
import shutil
import struct
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"hf_reference.py: {e}; install Debian's python3-torch and python3-numpy", file=sys.stderr)
    sys.exit(3)

# The writer is shared with the PyTorch oracle; the strict reader below (read_strict) is this file's own.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from gpt2_reference import write_safetensors  # noqa: E402


def fail(msg):
    print(f"hf_reference.py: {msg}", file=sys.stderr)
    sys.exit(1)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        fail(f"duplicate JSON keys in a header: {keys}")
    return dict(pairs)


def read_strict(path, dtypes=("F32",)):
    blob = open(path, "rb").read()
    if len(blob) < 8:
        fail(f"{path}: shorter than the header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n % 8 != 0:
        fail(f"{path}: header length {n} is not a multiple of 8")
    if 8 + n > len(blob):
        fail(f"{path}: header runs past the end")
    text = blob[8:8 + n].decode("utf-8")
    if text.rstrip(" ") != text.rstrip() or not text.lstrip().startswith("{"):
        fail(f"{path}: header padding is not spaces")
    header = json.loads(text, object_pairs_hook=no_duplicates)
    meta = header.pop("__metadata__", None)
    base = 8 + n
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    cursor, out = 0, {}
    size = {"F32": 4, "I32": 4}
    np_type = {"F32": np.float32, "I32": np.int32}
    for name, e in entries:
        if set(e) != {"dtype", "shape", "data_offsets"}:
            fail(f"{path}: {name} has keys {sorted(e)}")
        if e["dtype"] not in dtypes:
            fail(f"{path}: {name} is {e['dtype']}, expected one of {dtypes}")
        b, end = e["data_offsets"]
        if b != cursor:
            fail(f"{path}: {name} starts at {b}, previous tensor ended at {cursor}")
        if end - b != math.prod(e["shape"]) * size[e["dtype"]]:
            fail(f"{path}: {name} holds {end - b} bytes for shape {e['shape']}")
        if (base + b) % 4 != 0:
            fail(f"{path}: {name} data is not 4-byte aligned")
        out[name] = np.frombuffer(blob[base + b:base + end], dtype=np_type[e["dtype"]]).reshape(e["shape"]).copy()
        cursor = end
    if base + cursor != len(blob):
        fail(f"{path}: tensors end at {base + cursor}, file has {len(blob)} bytes")
    return out, meta


def expected_shapes(cfg):
    C, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
    shapes = {"wte.weight": [V, C], "wpe.weight": [P, C], "ln_f.weight": [C], "ln_f.bias": [C]}
    for i in range(L):
        p = f"h.{i}."
        shapes.update({p + "ln_1.weight": [C], p + "ln_1.bias": [C], p + "ln_2.weight": [C], p + "ln_2.bias": [C],
                       p + "attn.c_attn.weight": [C, 3 * C], p + "attn.c_attn.bias": [3 * C],
                       p + "attn.c_proj.weight": [C, C], p + "attn.c_proj.bias": [C],
                       p + "mlp.c_fc.weight": [C, 4 * C], p + "mlp.c_fc.bias": [4 * C],
                       p + "mlp.c_proj.weight": [4 * C, C], p + "mlp.c_proj.bias": [C]})
    return shapes


def gpt2_logits(w, cfg, tokens):
    """GPT-2 forward with HuggingFace's Conv1D weights, looked up by name."""
    t = {k: torch.from_numpy(v) for k, v in w.items()}
    C, H = cfg["n_embd"], cfg["n_head"]
    B, T = tokens.shape
    eps = cfg["layer_norm_epsilon"]
    x = t["wte.weight"][tokens] + t["wpe.weight"][torch.arange(T)]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), t[p + "ln_1.weight"], t[p + "ln_1.bias"], eps)
        q, k, v = (h @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (z.view(B, T, H, C // H).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), t[p + "ln_2.weight"], t[p + "ln_2.bias"], eps)
        h = F.gelu(h @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (C,), t["ln_f.weight"], t["ln_f.bias"], eps)
    return x @ t["wte.weight"].t()


def main(workdir):
    cfg = json.load(open(f"{workdir}/hf/config.json"), object_pairs_hook=no_duplicates)
    for key, want in (("model_type", "gpt2"), ("activation_function", "gelu_new"), ("architectures", ["GPT2LMHeadModel"])):
        if cfg.get(key) != want:
            fail(f"config.json: {key} is {cfg.get(key)!r}, expected {want!r}")
    weights, meta = read_strict(f"{workdir}/hf/model.safetensors")
    if meta != {"format": "pt"}:
        fail(f"model.safetensors: metadata {meta}, expected {{'format': 'pt'}}")
    shapes = expected_shapes(cfg)
    if set(weights) != set(shapes):
        fail(f"model.safetensors: names differ from GPT-2's: extra {sorted(set(weights) - set(shapes))}, "
             f"missing {sorted(set(shapes) - set(weights))}")
    for name, shape in shapes.items():
        if list(weights[name].shape) != shape:
            fail(f"model.safetensors: {name} is {list(weights[name].shape)}, HuggingFace's GPT-2 has {shape}")
    zt, _ = read_strict(f"{workdir}/zt.safetensors", dtypes=("F32", "I32"))
    with torch.no_grad():
        ref = gpt2_logits(weights, cfg, torch.from_numpy(zt["tokens"].astype(np.int64))).numpy()
    got = zt["logits"]
    err = float(np.abs(ref - got).max() / np.abs(ref).max())
    print(f"max_rel_logits {err:.3e}")
    if not err <= 1e-5:
        fail(f"logits differ: max relative error {err:.3e} > 1e-5")

    os.makedirs(f"{workdir}/variant", exist_ok=True)
    variant = {"transformer." + k: v for k, v in weights.items()}
    P = cfg["n_positions"]
    for i in range(cfg["n_layer"]):
        variant[f"transformer.h.{i}.attn.bias"] = np.tril(np.ones((P, P), dtype=np.float32)).reshape(1, 1, P, P)
    variant["lm_head.weight"] = weights["wte.weight"]
    write_safetensors(f"{workdir}/variant/model.safetensors", variant, {"format": "pt"})
    shutil.copy(f"{workdir}/hf/config.json", f"{workdir}/variant/config.json")


if __name__ == "__main__":
    main(sys.argv[1])
