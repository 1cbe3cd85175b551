#!/usr/bin/python3
"""The PyTorch loss of a HuggingFace MixtralForCausalLM directory on given tokens, for
zerotrain's import test (test-only; plain torch, the model of mixtral_reference.py).

Usage: mixtral_eval.py HF_DIR TOKENS   (TOKENS: a JSON list of B lists of T token ids)
Prints the mean next-token cross-entropy over the B x (T - 1) predicted positions.
Exit status 3 when torch is missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mixtral_reference as ref  # noqa: E402
from llama_reference import F, read_hf_export, torch  # noqa: E402


def main(hf_dir, tokens_json):
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    assert cfg["model_type"] == "mixtral", cfg["model_type"]
    model = ref.MoeModel(cfg)
    weights = {k[len("model."):] if k.startswith("model.") else k: v for k, v in read_hf_export(hf_dir).items()
               if not k.endswith("rotary_emb.inv_freq")}
    names = [n for n, _ in model.named_parameters()]
    assert sorted(weights) == sorted(names), sorted(set(weights) ^ set(names))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(weights[name].astype("float32")))
    tokens = torch.tensor(json.load(open(tokens_json)), dtype=torch.int64)
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, cfg["vocab_size"]), tokens[:, 1:].reshape(-1))
    print(f"{loss.item():.9g}")


if __name__ == "__main__":
    torch.set_num_threads(2)
    main(sys.argv[1], sys.argv[2])
