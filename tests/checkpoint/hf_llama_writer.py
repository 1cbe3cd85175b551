#!/usr/bin/python3
"""An independent HuggingFace LlamaForCausalLM writer for zerotrain's import tests (test-only; stdlib only).

Usage: hf_llama_writer.py OUTDIR [--seed N] [--layers L] [--hidden C] [--heads H] [--kv-heads K]
                          [--intermediate I] [--vocab V] [--positions P] [--tied] [--head-in-tied]
                          [--dtype bf16|f16|f32|mixed] [--shards 1|2] [--experts E --experts-per-tok K]

Writes, from the seed alone and without zerotrain's code:
  OUTDIR/config.json                      LlamaForCausalLM's keys, as transformers writes them
  OUTDIR/model-00001-of-00002.safetensors and -00002-: the weights with HF's names in HF's state-dict
  OUTDIR/model.safetensors.index.json     order, plus each layer's rotary_emb.inv_freq buffer (F32),
                                          cut greedily in two as huggingface_hub does (--shards 2);
                                          or OUTDIR/model.safetensors alone (--shards 1)
  OUTDIR/expected.safetensors             every weight as the F32 value the stored bits mean, widened
                                          here (BF16: bits << 16; F16: struct's half format)
Each file's tensors are laid out in state-dict order (not sorted, unlike zerotrain's writer), the
header keys in that order, metadata {"format": "pt"}. --dtype mixed stores the matrices in BF16
and the norms in F32, as some Hub checkpoints do. --head-in-tied adds lm_head.weight equal to
embed_tokens to a tied model (transformers drops it; other tools keep it). --experts E writes a
MixtralForCausalLM instead: each layer's mlp is block_sparse_moe (gate [E, C], then experts.j.w1,
w2, w3 in MixtralBlockSparseTop2MLP's registration order) and config.json is MixtralConfig's.
"""
import argparse
import json
import math
import os
import random
import struct

LAYER_TENSORS = ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                 "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
                 "input_layernorm.weight", "post_attention_layernorm.weight"]


def state_dict_shapes(a):
    """HF's state-dict order: embed_tokens, per layer self_attn, mlp, the two norms, then norm, lm_head."""
    C, I, V, hd = a.hidden, a.intermediate, a.vocab, a.hidden // a.heads
    kv = a.kv_heads * hd
    shapes = {"self_attn.q_proj.weight": [C, C], "self_attn.k_proj.weight": [kv, C],
              "self_attn.v_proj.weight": [kv, C], "self_attn.o_proj.weight": [C, C],
              "mlp.gate_proj.weight": [I, C], "mlp.up_proj.weight": [I, C], "mlp.down_proj.weight": [C, I],
              "input_layernorm.weight": [C], "post_attention_layernorm.weight": [C]}
    out = [("model.embed_tokens.weight", [V, C])]
    moe = [("block_sparse_moe.gate.weight", [a.experts, C])]
    for j in range(a.experts):
        moe += [(f"block_sparse_moe.experts.{j}.w1.weight", [I, C]), (f"block_sparse_moe.experts.{j}.w2.weight", [C, I]),
                (f"block_sparse_moe.experts.{j}.w3.weight", [I, C])]
    for i in range(a.layers):
        for t in LAYER_TENSORS:
            if a.experts and t.startswith("mlp."):
                if t == "mlp.gate_proj.weight":
                    out += [(f"model.layers.{i}.{name}", shape) for name, shape in moe]
                continue
            out.append((f"model.layers.{i}.{t}", shapes[t]))
        out.append((f"model.layers.{i}.self_attn.rotary_emb.inv_freq", [hd // 2]))
    out.append(("model.norm.weight", [C]))
    if not a.tied or a.head_in_tied:
        out.append(("lm_head.weight", [V, C]))
    return out


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def bf16_of(v):
    """(stored 2 bytes, widened value): round to nearest even on the float32 bits."""
    b = f32_bits(v)
    r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return struct.pack("<H", r), struct.unpack("<f", struct.pack("<I", r << 16))[0]


def f16_of(v):
    raw = struct.pack("<e", v)
    return raw, struct.unpack("<e", raw)[0]


def f32_of(v):
    raw = struct.pack("<f", v)
    return raw, struct.unpack("<f", raw)[0]


def encode(values, dtype):
    conv = {"BF16": bf16_of, "F16": f16_of, "F32": f32_of}[dtype]
    pairs = [conv(v) for v in values]
    return b"".join(p[0] for p in pairs), [p[1] for p in pairs]


def write_file(path, tensors):
    """tensors: list of (name, dtype, shape, raw bytes), laid out in this order."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))


def make_tensors(a):
    rng = random.Random(a.seed)
    hd = a.hidden // a.heads
    stored, expected, embed = [], [], None
    for name, shape in state_dict_shapes(a):
        n = math.prod(shape)
        if name.endswith("inv_freq"):
            vals = [1.0 / (a.rope_theta ** (2 * i / hd)) for i in range(hd // 2)]
            stored.append((name, "F32", shape, encode(vals, "F32")[0]))
            continue
        if name.endswith("norm.weight"):
            vals = [1.0 + rng.gauss(0.0, 0.1) for _ in range(n)]
        elif name == "lm_head.weight" and a.tied:
            vals = embed
        else:
            vals = [rng.gauss(0.0, 0.05) for _ in range(n)]
        if name == "model.embed_tokens.weight":
            embed = vals
        dtype = {"bf16": "BF16", "f16": "F16", "f32": "F32"}.get(a.dtype)
        if dtype is None:  # mixed
            dtype = "F32" if len(shape) == 1 else "BF16"
        raw, widened = encode(vals, dtype)
        stored.append((name, dtype, shape, raw))
        expected.append((name, "F32", shape, encode(widened, "F32")[0]))
    return stored, expected


def greedy(sizes, limit):
    """huggingface_hub's split_state_dict_into_shards (no tensor here exceeds the limit)."""
    shards, cur, cur_size = [], [], 0
    for i, s in enumerate(sizes):
        if cur_size + s > limit:
            shards.append(cur)
            cur, cur_size = [], 0
        cur.append(i)
        cur_size += s
    return shards + [cur]


def split_in_two(stored):
    """The smallest limit from half the total up at which the greedy split gives two shards."""
    sizes = [len(t[3]) for t in stored]
    limit = max(sum(sizes) // 2, max(sizes))
    while len(greedy(sizes, limit)) != 2:
        limit += 64
    return [[stored[i] for i in shard] for shard in greedy(sizes, limit)]


def config_json(a):
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": a.hidden,
            "intermediate_size": a.intermediate, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
            "num_key_value_heads": a.kv_heads, "hidden_act": "silu", "max_position_embeddings": a.positions,
            "rms_norm_eps": 1e-05, "rope_theta": a.rope_theta, "rope_scaling": None, "tie_word_embeddings": a.tied,
            "vocab_size": a.vocab, "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
            "bos_token_id": 1, "eos_token_id": 2, "initializer_range": 0.02, "pretraining_tp": 1,
            "torch_dtype": {"bf16": "bfloat16", "f16": "float16"}.get(a.dtype, "float32"),
            "transformers_version": "4.44.0", "use_cache": True}


def config_for(a):
    c = config_json(a)
    if not a.experts:
        return c
    for k in ("attention_bias", "mlp_bias", "pretraining_tp"):
        del c[k]
    c.update({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_local_experts": a.experts,
              "num_experts_per_tok": a.experts_per_tok, "router_aux_loss_coef": 0.02, "output_router_logits": False,
              "router_jitter_noise": 0.0, "sliding_window": None})
    return c


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    for flag, default in (("--seed", 1), ("--layers", 2), ("--hidden", 32), ("--heads", 4), ("--kv-heads", 2),
                          ("--intermediate", 48), ("--vocab", 257), ("--positions", 64), ("--shards", 2),
                          ("--experts", 0), ("--experts-per-tok", 2)):
        p.add_argument(flag, type=int, default=default)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--tied", action="store_true")
    p.add_argument("--head-in-tied", action="store_true")
    p.add_argument("--dtype", choices=["bf16", "f16", "f32", "mixed"], default="bf16")
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    stored, expected = make_tensors(a)
    if a.shards == 1:
        write_file(f"{a.outdir}/model.safetensors", stored)
    else:
        shards = split_in_two(stored)
        weight_map = {}
        for i, shard in enumerate(shards):
            name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
            write_file(f"{a.outdir}/{name}", shard)
            weight_map.update({t[0]: name for t in shard})
        index = {"metadata": {"total_size": sum(len(t[3]) for t in stored)}, "weight_map": weight_map}
        with open(f"{a.outdir}/model.safetensors.index.json", "w") as f:
            f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    write_file(f"{a.outdir}/expected.safetensors", expected)
    with open(f"{a.outdir}/config.json", "w") as f:
        f.write(json.dumps(config_for(a), indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
