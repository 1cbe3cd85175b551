#!/usr/bin/python3
"""PyTorch references for zerotrain's bf16 oracle test (test-only).

Usage: gpt2_bf16_reference.py WORKDIR
Reads WORKDIR/case.json and WORKDIR/init.safetensors (weights already rounded to bf16 and
widened to fp32, int32 "tokens" and "targets" of shape (B, T)), builds
gpt2_reference.Gpt2 and writes WORKDIR/torch.safetensors with, for one forward and
backward (mean cross-entropy over the counted targets, no update):
  fp32.logits, fp32.grad.<param>       -- fp32 PyTorch on those weights (the exact answer)
  autocast.logits, autocast.grad.<p>   -- torch.autocast("cpu", bfloat16): PyTorch's own bf16
Exit status 3 when torch is missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_reference import build, loss_of, read_safetensors, write_safetensors  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402


def run(cfg, init, tokens, targets, autocast):
    model = build(cfg, init)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits, loss = loss_of(model, tokens, targets, cfg["vocab_size"])
    loss.backward()
    out = {"logits": logits.detach().float().numpy()}
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.float().numpy()
    return out


def main(workdir):
    cfg = json.load(open(f"{workdir}/case.json"))["model"]
    init = read_safetensors(f"{workdir}/init.safetensors")
    tokens = torch.from_numpy(init["tokens"].astype(np.int64))
    targets = torch.from_numpy(init["targets"].astype(np.int64))
    out = {}
    for label, autocast in (("fp32", False), ("autocast", True)):
        for k, v in run(cfg, init, tokens, targets, autocast).items():
            out[f"{label}.{k}"] = v
    write_safetensors(f"{workdir}/torch.safetensors", out)


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(2)
    main(sys.argv[1])
