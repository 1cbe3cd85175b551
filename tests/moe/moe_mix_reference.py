#!/usr/bin/python3
"""PyTorch statement of how an MoE layer's output meets a dense MLP beside it, for
kernels/cpu/moe_mix_test.cc (test-only).

Usage: moe_mix_reference.py CASES.json OUT.json
Written from DeepSpeed's MoE(use_residual=True) (coef = softmax(Linear(C, 2)(x)); out = moe coef0
+ mlp coef1), HF Qwen2-MoE's shared expert (moe + sigmoid(shared_expert_gate(x)) shared) and
DeepSeek-MoE's shared experts (moe + shared). CASE: kind ("residual"|"gated_shared"|"shared"),
moe, dense (N, C), logits (N, 2|1|0), R (N, C). OUT: y and the gradients of sum(y R) to moe,
dense and logits.
Exit status 3 when torch is missing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
except ImportError as e:
    print(f"moe_mix_reference.py: {e}; install Debian's python3-torch", file=sys.stderr)
    sys.exit(3)
import moe_gate_reference  # noqa: E402  (its command line)


def mix(c):
    t = lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True)  # noqa: E731
    moe, dense = t(c["moe"]), t(c["dense"])
    logits = t(c["logits"]) if c["logits"] else None
    if c["kind"] == "residual":
        coef = torch.softmax(logits, dim=-1)
        y = moe * coef[:, 0:1] + dense * coef[:, 1:]
    elif c["kind"] == "gated_shared":
        y = moe + torch.sigmoid(logits) * dense
    else:
        y = moe + dense
    (y * torch.tensor(c["R"], dtype=torch.float64)).sum().backward()
    return {"y": y.detach().tolist(), "dmoe": moe.grad.tolist(), "ddense": dense.grad.tolist(),
            "dlogits": logits.grad.tolist() if logits is not None else []}


if __name__ == "__main__":
    moe_gate_reference.run_json(mix)
