#!/usr/bin/env python3
"""PyTorch's training step on the GPU, the reference of bench/cuda/gpu_train_step.sh:
a nanoGPT-shaped GPT-2 (tied head, GELU tanh, LayerNorm with bias), or with --llama a
Llama-shaped model (RMSNorm, RoPE, SwiGLU, grouped-query attention, tied head; SmolLM-135M's
shape by default), in eager mode with scaled_dot_product_attention (flash where PyTorch picks
it), bf16 autocast over fp32 weights (zerotrain's bf16: fp32 master, bf16 compute) and fused
AdamW; optionally torch.compile. Weights N(0, 0.02), random tokens; median step time after
warm-up, synchronised.
  torch_gpt2_cuda.py --batch B --seq T [--layers 12 --heads 12 --embd 768] [--steps N] [--compile]
  torch_gpt2_cuda.py --llama --batch B --seq T     (30 layers, 9 heads, 3 kv heads, 576, 1536, 49152)
  --device cpu runs it on the CPU (to check the script where there is no GPU)
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
        y = sdpa(q, k, v).transpose(1, 2).reshape(B, T, C)
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


class RmsNorm(nn.Module):  # nn.RMSNorm where this torch has it (2.4 and later), else this
    def __init__(self, C, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(C)), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rms_norm(C):
    return nn.RMSNorm(C, eps=1e-5) if hasattr(nn, "RMSNorm") else RmsNorm(C, 1e-5)


def sdpa(q, k, v):  # causal SDPA; written out only where torch lacks it (Debian's 1.13, the CPU check)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v


def attention(q, k, v):  # grouped-query: SDPA's enable_gqa (torch 2.5 and later), else repeated kv
    try:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    except (TypeError, AttributeError):
        r = q.shape[1] // k.shape[1]
        return sdpa(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1))


class LlamaBlock(nn.Module):
    def __init__(self, C, H, KV, I):
        super().__init__()
        self.n1, self.n2 = rms_norm(C), rms_norm(C)
        self.hs, self.H, self.KV = C // H, H, KV
        self.q, self.k, self.v = (nn.Linear(C, n * self.hs, bias=False) for n in (H, KV, KV))
        self.o = nn.Linear(C, C, bias=False)
        self.gate, self.up, self.down = nn.Linear(C, I, bias=False), nn.Linear(C, I, bias=False), nn.Linear(I, C, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        h = self.n1(x)
        q, k, v = (p(h).view(B, T, n, self.hs).transpose(1, 2)
                   for p, n in ((self.q, self.H), (self.k, self.KV), (self.v, self.KV)))
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        y = attention(q, k, v)
        x = x + self.o(y.transpose(1, 2).reshape(B, T, C))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def rope(x, cos, sin):  # rotate-half RoPE (HuggingFace's Llama layout)
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class Llama(nn.Module):
    def __init__(self, L, H, KV, C, I, V, T):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.blocks = nn.ModuleList(LlamaBlock(C, H, KV, I) for _ in range(L))
        self.norm = rms_norm(C)
        hs = C // H
        inv = 1.0 / (10000.0 ** (torch.arange(0, hs, 2).float() / hs))
        f = torch.outer(torch.arange(T).float(), inv)
        self.register_buffer("cos", torch.cat((f, f), dim=-1).cos(), persistent=False)
        self.register_buffer("sin", torch.cat((f, f), dim=-1).sin(), persistent=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.wte(idx)
        for b in self.blocks:
            x = b(x, self.cos[:T], self.sin[:T])
        return self.norm(x) @ self.wte.weight.t()


def main():
    ap = argparse.ArgumentParser()
    for k, d in [("layers", 0), ("heads", 0), ("kv_heads", 3), ("embd", 0), ("inter", 1536), ("vocab", 0),
                 ("batch", 16), ("seq", 1024), ("steps", 20), ("warmup", 5)]:
        ap.add_argument("--" + k, type=int, default=d)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--llama", action="store_true")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    g = {"layers": 30, "heads": 9, "embd": 576, "vocab": 49152} if a.llama else \
        {"layers": 12, "heads": 12, "embd": 768, "vocab": 50304}
    for k, d in g.items():
        setattr(a, k, getattr(a, k) or d)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    model = (Llama(a.layers, a.heads, a.kv_heads, a.embd, a.inter, a.vocab, a.seq) if a.llama
             else Gpt2(a.layers, a.heads, a.embd, a.vocab, 1024)).to(dev)
    for name, p in model.named_parameters():
        if p.dim() == 2:
            nn.init.normal_(p, std=0.02)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    fused = {"fused": True} if dev.type == "cuda" else {}  # (an old CPU torch has no fused argument)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, **fused)
    step_model = torch.compile(model) if a.compile else model
    x = torch.randint(0, 49152 if a.llama else 50257, (a.batch, a.seq), device=dev)
    y = torch.roll(x, -1, dims=1)
    times = []
    for s in range(a.warmup + a.steps):
        sync()
        t0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(step_model(x).float().view(-1, a.vocab), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    ms = statistics.median(times) * 1e3
    peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else 0
    print(json.dumps({"bench": "torch_gpt2_cuda", "model": "llama" if a.llama else "gpt2", "compile": a.compile,
                      "batch": a.batch, "seq": a.seq,
                      "ms_per_step": round(ms, 2), "tokens_per_s": round(a.batch * a.seq / (ms / 1e3)),
                      "peak_gib": round(peak / 2**30, 2),
                      "loss": round(loss.item(), 4), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
