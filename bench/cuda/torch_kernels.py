#!/usr/bin/env python3
"""PyTorch's equivalents of bench/cuda/gpu_kernels_bench.cc on the same GPU, same sizes.

GPT-2 124M at B=16, T=1024 in bf16: F.linear with bias (cuBLASLt under torch), the two
backward products (dY @ W, dY^T @ X accumulated into an fp32 gradient as zerotrain does),
fused AdamW over 124M fp32 parameters, the bf16 cast, the sum of squares, GELU (tanh)
forward and backward, the bias gradient (a column sum), LayerNorm, the classifier (fp32
cross-entropy over bf16 logits, as autocast does) and SDPA attention (flash, causal). Median of 20 timed runs
after 3 warm-ups, CUDA events around each. Prints one line per kernel and a last JSON
line with the same names as the zerotrain bench.
"""
import json
import sys

import torch
import torch.nn.functional as F


def time_ms(f, repeats=20):
    for _ in range(3):
        f()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(repeats):
        a.record()
        f()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return sorted(ms)[len(ms) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    out = {}

    def rec(name, ms, unit, rate):
        print("%-34s %9.4f ms  %8.1f %s" % (name, ms, rate, unit), flush=True)
        out[name] = round(ms, 5)

    N = 16 * 1024
    for name, C, OC in [("qkv", 768, 2304), ("attn_proj", 768, 768), ("fc", 768, 3072), ("fc_proj", 3072, 768),
                        ("lm_head", 768, 50304)]:
        x = torch.rand(N, C, device=dev, dtype=torch.bfloat16) - 0.5
        w = torch.rand(OC, C, device=dev, dtype=torch.bfloat16) - 0.5
        b = torch.rand(OC, device=dev, dtype=torch.bfloat16) - 0.5
        dy = torch.rand(N, OC, device=dev, dtype=torch.bfloat16) - 0.5
        dw = torch.zeros(OC, C, device=dev, dtype=torch.float32)
        flops = 2.0 * N * C * OC
        ms = time_ms(lambda: F.linear(x, w, b))
        rec(name + "_fwd", ms, "TFLOP/s", flops / ms / 1e9)
        ms = time_ms(lambda: dy @ w)
        rec(name + "_bwd_input", ms, "TFLOP/s", flops / ms / 1e9)
        ms = time_ms(lambda: dw.add_(torch.mm(dy.t(), x), alpha=1.0))
        rec(name + "_bwd_weight", ms, "TFLOP/s", flops / ms / 1e9)
        del x, w, b, dy, dw

    src = torch.rand(1 << 28, device=dev)
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src))
    rec("d2d_copy_1GiB", ms, "GB/s", 2.0 * (1 << 30) / ms / 1e6)
    del src, dst
    P = 124_439_808
    p = torch.nn.Parameter(torch.rand(P, device=dev) - 0.5)
    p.grad = torch.rand(P, device=dev) - 0.5
    opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
    ms = time_ms(lambda: opt.step())
    rec("adamw_124M", ms, "GB/s", 28.0 * P / ms / 1e6)
    ms = time_ms(lambda: p.detach().to(torch.bfloat16))
    rec("cast_f32_bf16_124M", ms, "GB/s", 6.0 * P / ms / 1e6)
    g = p.grad
    ms = time_ms(lambda: torch.linalg.vector_norm(g))
    rec("sum_squares_124M", ms, "GB/s", 4.0 * P / ms / 1e6)
    del p, g, opt
    A = 16 * 1024 * 3072
    act = (torch.rand(A, device=dev, dtype=torch.bfloat16) - 0.5).requires_grad_()
    ms = time_ms(lambda: F.gelu(act, approximate="tanh"))
    rec("gelu_fwd_bf16", ms, "GB/s", 4.0 * A / ms / 1e6)
    y = F.gelu(act, approximate="tanh")
    dy = torch.rand_like(y)
    ms = time_ms(lambda: torch.autograd.grad(y, act, dy, retain_graph=True))
    rec("gelu_bwd_bf16", ms, "GB/s", 6.0 * A / ms / 1e6)
    d2 = dy.view(16 * 1024, 3072)
    ms = time_ms(lambda: d2.sum(0, dtype=torch.float32))
    rec("bias_grad_fc_bf16", ms, "GB/s", 2.0 * A / ms / 1e6)
    C, V, Vp, B, T, NH = 768, 50257, 50304, 16, 1024, 12
    x = (torch.rand(N, C, device=dev, dtype=torch.bfloat16) - 0.5).requires_grad_()
    w = torch.rand(C, device=dev, dtype=torch.bfloat16).requires_grad_()
    b = torch.rand(C, device=dev, dtype=torch.bfloat16).requires_grad_()
    ms = time_ms(lambda: F.layer_norm(x, (C,), w, b))
    rec("layernorm_fwd_bf16", ms, "GB/s", 4.0 * N * C / ms / 1e6)
    y = F.layer_norm(x, (C,), w, b)
    gy = torch.rand_like(y)
    ms = time_ms(lambda: torch.autograd.grad(y, (x, w, b), gy, retain_graph=True))
    rec("layernorm_bwd_bf16", ms, "GB/s", 8.0 * N * C / ms / 1e6)
    logits = (torch.rand(N, Vp, device=dev, dtype=torch.bfloat16) - 0.5).requires_grad_()
    tgt = (torch.arange(N, device=dev) * 7919) % V
    ms = time_ms(lambda: F.cross_entropy(logits[:, :V].float(), tgt))
    rec("crossentropy_fwd_bf16", ms, "GB/s", 2.0 * N * Vp / ms / 1e6)
    loss = F.cross_entropy(logits[:, :V].float(), tgt)
    ms = time_ms(lambda: torch.autograd.grad(loss, logits, retain_graph=True))
    rec("crossentropy_bwd_bf16", ms, "GB/s", 4.0 * N * Vp / ms / 1e6)
    del logits, loss
    q, k, v = ((torch.rand(B, NH, T, C // NH, device=dev, dtype=torch.bfloat16) - 0.5).requires_grad_() for _ in range(3))
    flops = 4.0 * B * NH * T * T * (C // NH)
    ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    rec("attention_fwd_bf16", ms, "TFLOP/s", flops / ms / 1e9)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    go = torch.rand_like(o)
    ms = time_ms(lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True))
    rec("attention_bwd_bf16", ms, "TFLOP/s", 2.0 * flops / ms / 1e9)
    print(json.dumps({"bench": "torch_kernels", "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(), "ms": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
