#!/usr/bin/env python3
"""PyTorch's GPT-2 training step on the GPU, the reference of bench/cuda/gpu_train_step.sh:
a nanoGPT-shaped GPT-2 (tied head, GELU tanh, LayerNorm with bias) in eager mode with
scaled_dot_product_attention (flash where PyTorch picks it), bf16 autocast over fp32
weights (zerotrain's bf16: fp32 master, bf16 compute) and fused AdamW; optionally
torch.compile. Random tokens; median step time after warm-up, CUDA-synchronised.
  torch_gpt2_cuda.py --batch B --seq T [--layers 12 --heads 12 --embd 768] [--steps N] [--compile]
Prints one JSON line: tokens_per_s, ms_per_step, peak memory.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.attn, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fc_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        self.H = H

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, L, H, C, V, P):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(P, C)
        self.blocks = nn.ModuleList(Block(C, H) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.ln_f(x) @ self.wte.weight.t()


def main():
    ap = argparse.ArgumentParser()
    for k, d in [("layers", 12), ("heads", 12), ("embd", 768), ("vocab", 50304), ("batch", 16), ("seq", 1024),
                 ("steps", 20), ("warmup", 5)]:
        ap.add_argument("--" + k, type=int, default=d)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    model = Gpt2(a.layers, a.heads, a.embd, a.vocab, 1024).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    step_model = torch.compile(model) if a.compile else model
    x = torch.randint(0, 50257, (a.batch, a.seq), device=dev)
    y = torch.roll(x, -1, dims=1)
    times = []
    for s in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(step_model(x).float().view(-1, a.vocab), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    ms = statistics.median(times) * 1e3
    print(json.dumps({"bench": "torch_gpt2_cuda", "compile": a.compile, "batch": a.batch, "seq": a.seq,
                      "ms_per_step": round(ms, 2), "tokens_per_s": round(a.batch * a.seq / (ms / 1e3)),
                      "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                      "loss": round(loss.item(), 4), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
