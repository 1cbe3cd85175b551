#!/usr/bin/python3
"""PyTorch mixture-of-experts transformer for zerotrain's MoE oracle test (test-only; plain
torch, no transformers).

Usage: mixtral_reference.py WORKDIR   (as llama_reference.py: case.json, init.safetensors,
or zerotrain's HuggingFace export in WORKDIR/hf, MixtralForCausalLM's config.json and
names; writes WORKDIR/torch.safetensors, plus "aux" and "step_aux", the balance loss of
batch 0 and of each training step). case.json's model: HF Mixtral's keys, plus for the
cases HF cannot describe "moe_gate" (the routing rule; absent: Mixtral's),
"moe_intermediate_size", "decoder_sparse_step", and a dense MLP beside the experts:
"use_residual" (DeepSpeed's PR-MoE) or "shared_expert_intermediate_size" with
"shared_expert_gate" (Qwen2-MoE's gated shared expert; false: DeepSeek-MoE's plain sum).
The Llama body of llama_reference.py with the MLP of every decoder_sparse_step-th block
((l + 1) % step == 0) replaced by a sparse MoE block of num_local_experts SwiGLU experts
(w1 gate, w3 up, w2 down) behind a bias-free router, written from HF modeling_mixtral.py's
conventions, independently of zerotrain's C++:
  routing "mixtral": softmax over experts in fp32, torch.topk of num_experts_per_tok,
    renormalised to sum 1 (norm_topk_prob), nothing dropped; the balance loss is HF's
    load_balancing_loss_func over every MoE block's router logits of the forward;
  routing "deepspeed": DeepSpeed's gate as tests/moe/moe_gate_reference.route states it
    (top-1 / top-2 / top-k with capacity and drops), its MOELayer combine, and the balance
    loss the sum of every MoE block's l_aux.
The step objective is the cross-entropy plus router_aux_loss_coef times the balance loss.
Exit status 3 when torch is missing (the test then fails).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "moe"))
from gpt2_reference import run_case  # noqa: E402
import llama_reference as llama  # noqa: E402
from llama_reference import torch, nn, F  # noqa: E402
import moe_gate_reference as gate  # noqa: E402


class Expert(nn.Module):
    def __init__(self, C, I):
        super().__init__()
        self.w1 = nn.Linear(C, I, bias=False)
        self.w3 = nn.Linear(C, I, bias=False)
        self.w2 = nn.Linear(I, C, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoe(nn.Module):
    def __init__(self, cfg, owner):
        super().__init__()
        C, E = cfg["hidden_size"], cfg["num_local_experts"]
        I = cfg.get("moe_intermediate_size", cfg["intermediate_size"])
        self.gate = nn.Linear(C, E, bias=False)
        self.experts = nn.ModuleList(Expert(C, I) for _ in range(E))
        self.k, self.rule = cfg["num_experts_per_tok"], cfg.get("moe_gate", {"routing": "mixtral"})
        self.owner = [owner]  # the model collects each block's router logits / l_aux
        # A dense MLP beside the experts: DeepSpeed's PR-MoE residual (an expert-sized MLP and
        # a (2, C) coefficient linear with bias, softmax-mixed), or a shared expert, gated by
        # sigmoid of a (1, C) linear (Qwen2-MoE) or added as it is (shared_expert_gate false).
        self.mix = "residual" if cfg.get("use_residual") else None
        if cfg.get("shared_expert_intermediate_size", 0) > 0:
            self.mix = "gated" if cfg.get("shared_expert_gate", True) else "plain"
        if self.mix:
            S = I if self.mix == "residual" else cfg["shared_expert_intermediate_size"]
            self.shared_expert = Expert(C, S)
        if self.mix in ("residual", "gated"):
            self.shared_expert_gate = nn.Linear(C, 2 if self.mix == "residual" else 1, bias=self.mix == "residual")

    def forward(self, x):
        B, T, C = x.shape
        h = x.reshape(-1, C)
        logits = self.gate(h)
        y = torch.zeros_like(h)
        if self.rule["routing"] == "mixtral":
            w = F.softmax(logits, dim=1, dtype=torch.float)
            w, chosen = torch.topk(w, self.k, dim=-1)
            if self.rule.get("renormalize", True):
                w = w / w.sum(dim=-1, keepdim=True)
            self.owner[0].router_logits.append(logits)
        else:
            r = gate.route(dict(self.rule, k=self.k, gumbel=[], uniform=[]), logits)
            chosen, w = r["expert"], r["weight"].to(torch.float32)
            self.owner[0].l_aux.append(r["l_aux"])
        for e, expert in enumerate(self.experts):
            tok, slot = torch.where(chosen == e)
            if tok.numel() > 0:
                y = y.index_add(0, tok, expert(h[tok]) * w[tok, slot, None])
        if self.mix == "residual":
            coef = F.softmax(self.shared_expert_gate(h), dim=-1)
            y = y * coef[:, 0:1] + self.shared_expert(h) * coef[:, 1:2]
        elif self.mix == "gated":
            y = y + torch.sigmoid(self.shared_expert_gate(h)) * self.shared_expert(h)
        elif self.mix == "plain":
            y = y + self.shared_expert(h)
        return y.view(B, T, C)


def balance_loss(logits, E, k):
    """HF load_balancing_loss_func without an attention mask, over the layers' logits."""
    probs = F.softmax(torch.cat(logits, dim=0), dim=-1)
    _, selected = torch.topk(probs, k, dim=-1)
    tokens_per_expert = F.one_hot(selected, E).float().mean(dim=0)
    return (tokens_per_expert * probs.mean(dim=0).unsqueeze(0)).sum() * E


class MoeBlock(llama.Block):
    def __init__(self, cfg, owner):
        super().__init__(cfg)
        del self.mlp
        self.block_sparse_moe = SparseMoe(cfg, owner)

    def forward(self, x, positions=None, scale=1.0):
        x = x + self.self_attn(self.input_layernorm(x), positions) * scale
        return x + self.block_sparse_moe(self.post_attention_layernorm(x)) * scale


class MoeModel(llama.Llama):
    def __init__(self, cfg):
        super().__init__(cfg)
        step = cfg.get("decoder_sparse_step", 1)
        for l in range(len(self.layers)):
            if (l + 1) % step == 0:
                self.layers[l] = MoeBlock(cfg, self)
        self.E, self.k, self.aux_coef = cfg["num_local_experts"], cfg["num_experts_per_tok"], cfg["router_aux_loss_coef"]
        self.mixtral = cfg.get("moe_gate", {"routing": "mixtral"})["routing"] == "mixtral"

    def forward(self, tokens, routes=None):
        self.router_logits, self.l_aux = [], []
        logits = super().forward(tokens, routes)
        if self.mixtral:
            self.aux_loss = balance_loss(self.router_logits, self.E, self.k)
        else:
            self.aux_loss = sum(self.l_aux).to(torch.float32)
        return logits


def build(cfg, init, workdir):
    orig = llama.Llama
    llama.Llama = MoeModel
    try:
        return llama.build(cfg, init, workdir)
    finally:
        llama.Llama = orig


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(2)
    run_case(sys.argv[1], lambda cfg, init: build(cfg, init, sys.argv[1]))
