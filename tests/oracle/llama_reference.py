#!/usr/bin/python3
"""PyTorch Llama reference for zerotrain's Llama oracle test (test-only; plain torch, no transformers).

Usage: llama_reference.py WORKDIR
Reads WORKDIR/case.json, WORKDIR/init.safetensors (int32 "tokens" and "targets" of shape
(steps, B, T)) and the weights as zerotrain's HuggingFace export WORKDIR/hf: config.json and
model.safetensors, or model.safetensors.index.json and its shards (LlamaForCausalLM names,
nn.Linear (out, in) layout, no vocabulary padding, no lm_head.weight when tied), read here
with a small safetensors reader (read_hf_export); config.json must agree with case.json.
Without WORKDIR/hf, the weights are init.safetensors' (zerotrain's names, minus "model.").
Builds the same Llama and writes WORKDIR/torch.safetensors with:
  logits (B, T, V), loss (1), grad.<param> for every parameter    -- batch 0, no update
  step_losses (steps)                                              -- AdamW training run
Written from HF modeling_llama.py's conventions, independently of zerotrain's C++:
RMSNorm in fp32 with eps inside the rsqrt, rotate-half RoPE with inv_freq =
theta^(-arange(0, hd, 2) / hd) in fp32, SiLU-gated MLP, causal softmax attention with the
kv heads repeated by repeat_kv (query head h reads kv head h // n_rep).
Exit status 3 with a message when torch is not installed (the test then fails).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_reference import read_safetensors, routed, run_case  # noqa: E402

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"llama_reference.py: {e}; install Debian's python3-torch and python3-numpy", file=sys.stderr)
    sys.exit(3)


class RMSNorm(nn.Module):
    def __init__(self, C, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.eps = eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_cos_sin(T, hd, theta, positions=None):
    """cos, sin at positions 0..T-1, or at positions (B, T) per sequence (shaped (B, 1, T, hd))."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    if positions is None:
        freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
    else:
        freqs = (positions.to(torch.float32)[..., None] * inv_freq)[:, None]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def repeat_kv(x, n_rep):
    """HF repeat_kv: (B, nkv, T, hd) -> (B, nkv * n_rep, T, hd), each kv head n_rep times in a row."""
    B, nkv, T, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(B, nkv, n_rep, T, hd).reshape(B, nkv * n_rep, T, hd)


class Attention(nn.Module):
    def __init__(self, C, nh, nkv, theta, bias=False, qkv_bias=False):
        """bias: HF LlamaConfig.attention_bias (q, k, v and o); qkv_bias: Qwen2's (q, k, v only)."""
        super().__init__()
        self.nh, self.nkv, self.hd, self.theta = nh, nkv, C // nh, theta
        self.q_proj = nn.Linear(C, nh * self.hd, bias=bias or qkv_bias)
        self.k_proj = nn.Linear(C, nkv * self.hd, bias=bias or qkv_bias)
        self.v_proj = nn.Linear(C, nkv * self.hd, bias=bias or qkv_bias)
        self.o_proj = nn.Linear(nh * self.hd, C, bias=bias)

    def forward(self, x, positions=None):
        B, T, C = x.shape
        q = self.q_proj(x).view(B, T, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.nkv, self.hd).transpose(1, 2)
        cos, sin = rope_cos_sin(T, self.hd, self.theta, positions)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = self.nh // self.nkv
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        att = (q @ k.transpose(-2, -1)) * (self.hd ** -0.5)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1, dtype=torch.float32)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.o_proj(y)


class Mlp(nn.Module):
    def __init__(self, C, I, bias=False):
        super().__init__()
        self.gate_proj = nn.Linear(C, I, bias=bias)
        self.up_proj = nn.Linear(C, I, bias=bias)
        self.down_proj = nn.Linear(I, C, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["hidden_size"]
        self.input_layernorm = RMSNorm(C, cfg["rms_norm_eps"])
        self.self_attn = Attention(C, cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["rope_theta"],
                                   cfg.get("attention_bias", False), cfg.get("model_type") == "qwen2")
        self.post_attention_layernorm = RMSNorm(C, cfg["rms_norm_eps"])
        self.mlp = Mlp(C, cfg["intermediate_size"], cfg.get("mlp_bias", False))

    def forward(self, x, positions=None, scale=1.0):
        x = x + self.self_attn(self.input_layernorm(x), positions) * scale
        return x + self.mlp(self.post_attention_layernorm(x)) * scale


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, V = cfg["hidden_size"], cfg["vocab_size"]
        self.tied = cfg["tie_word_embeddings"]
        self.embed_tokens = nn.Embedding(V, C)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg["num_hidden_layers"]))
        self.norm = RMSNorm(C, cfg["rms_norm_eps"])
        if not self.tied:
            self.lm_head = nn.Linear(C, V, bias=False)

    def forward(self, tokens, routes=None):
        x = self.embed_tokens(tokens)
        for i, block in enumerate(self.layers):
            x = routed(block, x, routes[i] if routes else None)
        x = self.norm(x)
        return x @ self.embed_tokens.weight.t() if self.tied else self.lm_head(x)


def read_hf_export(d):
    """The weights of a HuggingFace model directory d: model.safetensors, or the index and
    its shards (every shard's tensors exactly those the index maps to it)."""
    index = os.path.join(d, "model.safetensors.index.json")
    weight_map = json.load(open(index))["weight_map"] if os.path.exists(index) else None
    files = sorted(set(weight_map.values())) if weight_map else ["model.safetensors"]
    out = {}
    for f in files:
        for name, value in read_safetensors(os.path.join(d, f)).items():
            assert weight_map is None or weight_map[name] == f, (name, f)
            assert name not in out, name
            out[name] = value
    assert weight_map is None or set(out) == set(weight_map), sorted(set(weight_map) ^ set(out))
    return out


def hf_weights(cfg, workdir):
    """The export's tensors under this file's parameter names, after checking config.json."""
    hf_cfg = json.load(open(os.path.join(workdir, "hf", "config.json")))
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
            "mixtral": "MixtralForCausalLM"}[cfg.get("model_type", "llama")]
    assert hf_cfg["architectures"] == [arch] and hf_cfg["model_type"] == cfg.get("model_type", "llama"), hf_cfg
    for key, want in cfg.items():
        assert hf_cfg[key] == want, (key, hf_cfg[key], want)
    weights = read_hf_export(os.path.join(workdir, "hf"))
    assert ("lm_head.weight" in weights) == (not cfg["tie_word_embeddings"]), sorted(weights)
    return {(k if k == "lm_head.weight" else k[len("model."):]): v for k, v in weights.items()}


def build(cfg, init, workdir=None):
    model = Llama(cfg)
    hf = workdir is not None and os.path.isdir(os.path.join(workdir, "hf"))
    weights = hf_weights(cfg, workdir) if hf else init
    names = [name for name, _ in model.named_parameters()]
    if hf:
        assert sorted(weights) == sorted(names), sorted(set(weights) ^ set(names))
    with torch.no_grad():
        for name, p in model.named_parameters():
            src = weights[name]
            if not hf and name in ("embed_tokens.weight", "lm_head.weight"):
                src = src[: cfg["vocab_size"]]  # zerotrain may pad the vocabulary
            assert tuple(src.shape) == tuple(p.shape), (name, src.shape, p.shape)
            p.copy_(torch.from_numpy(src))
    return model


def main(workdir):
    run_case(workdir, lambda cfg, init: build(cfg, init, workdir))


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(2)
    main(sys.argv[1])
