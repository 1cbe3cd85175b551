#!/usr/bin/python3
"""Times PyTorch's training step (forward + backward + AdamW) for one GPT-2 or Llama shape
and prints one JSON line with medians; bench/train_step.sh runs it alternately with
zerotrain's train_step_bench. The models are tests/oracle/gpt2_reference.py's Gpt2 and
tests/oracle/llama_reference.py's Llama (plain torch: RMSNorm, rotate-half RoPE, SwiGLU,
GQA by repeat_kv, no biases), the architectures the oracle tests check zerotrain against.
  torch_train_step.py --layers L --heads H --embd C --vocab V --batch B --seq T [--steps N] [--warmup W] [--threads P]
                      [--family llama --intermediate I --kv-heads KV --tied]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from gpt2_reference import Gpt2  # noqa: E402
from llama_reference import Llama  # noqa: E402


def build_model(a):
    if a.family == "gpt2":
        return Gpt2({"n_embd": a.embd, "vocab_size": a.vocab, "n_positions": a.positions, "n_layer": a.layers,
                     "n_head": a.heads})
    return Llama({"hidden_size": a.embd, "vocab_size": a.vocab, "num_hidden_layers": a.layers,
                  "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads or a.heads,
                  "intermediate_size": a.intermediate, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                  "tie_word_embeddings": a.tied})


def main():
    ap = argparse.ArgumentParser()
    for k, d in [("layers", 12), ("heads", 12), ("embd", 768), ("vocab", 50257), ("batch", 4), ("seq", 64),
                 ("steps", 5), ("warmup", 1), ("threads", 2), ("positions", 1024), ("intermediate", 2048),
                 ("kv-heads", 0)]:
        ap.add_argument("--" + k, type=int, default=d)
    ap.add_argument("--family", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--tied", action="store_true", help="llama: tie_word_embeddings")
    ap.add_argument("--autocast", choices=["none", "bf16"], default="none",
                    help="bf16: torch.autocast('cpu', bfloat16) around forward and loss (fp32 weights)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = build_model(a)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4)
    x = torch.randint(0, a.vocab, (a.batch, a.seq))
    y = torch.roll(x, -1)
    fwd, bwd, st, total = [], [], [], []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
            loss = F.cross_entropy(model(x).view(-1, a.vocab), y.view(-1))
        t1 = time.perf_counter()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        if s >= a.warmup:
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            st.append(t3 - t2)
            total.append(t3 - t0)
    med = statistics.median
    import resource
    print(json.dumps({"impl": "pytorch", "family": a.family, "params": sum(p.numel() for p in model.parameters()),
                      "precision": "bf16" if a.autocast == "bf16" else "fp32",
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      "version": torch.__version__, "ms": 1e3 * med(total),
                      "forward_ms": 1e3 * med(fwd), "backward_ms": 1e3 * med(bwd), "optimizer_ms": 1e3 * med(st),
                      "ms_min": 1e3 * min(total), "ms_max": 1e3 * max(total)}))


if __name__ == "__main__":
    main()
