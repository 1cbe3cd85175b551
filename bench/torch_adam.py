#!/usr/bin/python3
"""Times torch.optim.AdamW's step on GPT-2 small's parameters (124,439,808, as the
model's 148 tensors, the way PyTorch users hold them) and on one flat tensor of the same
size, on the requested threads. One JSON line with medians.
  torch_adam.py [--threads P] [--reps R]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import torch  # noqa: E402
from gpt2_reference import Gpt2  # noqa: E402


def time_step(params, reps):
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.01}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    opt = torch.optim.AdamW(groups, lr=1e-4)
    for p in params:
        p.grad = torch.full_like(p, 1e-3)
    opt.step()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        opt.step()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model = Gpt2({"n_embd": 768, "vocab_size": 50257, "n_positions": 1024, "n_layer": 12, "n_head": 12})
    params = [p.detach().requires_grad_(False) for p in model.parameters()]
    n = sum(p.numel() for p in params)
    per_tensor = time_step(params, a.reps)
    del params, model
    flat = time_step([torch.zeros(n, 1)], a.reps)
    print(json.dumps({"impl": "pytorch", "version": torch.__version__, "params": n,
                      "adam_ms": per_tensor * 1e3, "adam_flat_ms": flat * 1e3}))


if __name__ == "__main__":
    main()
