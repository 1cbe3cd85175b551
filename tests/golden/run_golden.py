#!/usr/bin/env python3
"""The golden results of issue 27: every later build must reproduce them bit for bit.

Each run trains a tiny model for 3 steps through `zerotrain train` (mpirun for several
ranks), in a configuration chosen to give the same bits on every x86-64 CPU: the scalar
kernels (ZT_ISA=scalar, no FMA contraction), OpenBLAS's SSE3 Prescott kernels for every
GEMM (ZT_GEMM=openblas, OPENBLAS_CORETYPE=Prescott, and oneDNN capped below any bf16
matmul so bf16 GEMMs take the widening fp32 path), one thread per rank, and glibc's libm
without its FMA variants. OpenBLAS fixes a forced core's K blocking (SGEMM_DEFAULT_Q) at
build time and only sizes its M blocks by the cache, which changes no sum's order, so the
GEMM bits do not depend on the CPU either. It records, per run, each step's loss and gradient norm as
exact numbers (the loss as metrics.csv's hex column, the norm at 17 significant digits;
the parameter-server job writes no metrics.csv, so its printed 4-digit values) and a digest of the final parameters (SHA-256 over the checksums of every "param" piece
of the checkpoint saved at the end).

  run_golden.py ZEROTRAIN            compare with golden.json next to this file (exit 1 on
                                     any difference, naming run, step and value)
  run_golden.py ZEROTRAIN --write    record golden.json anew (only in a commit that says
                                     which result changed and why)
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden.json")
ENV = {
    "ZT_ISA": "scalar", "ZT_GEMM": "openblas", "OPENBLAS_CORETYPE": "Prescott", "ONEDNN_MAX_CPU_ISA": "SSE41",
    "DNNL_MAX_CPU_ISA": "SSE41", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX2_Usable,-FMA_Usable,-AVX512F_Usable",
}
GPT2 = {"n_layer": 2, "n_head": 4, "n_embd": 32, "n_positions": 16}
LLAMA = {"family": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 16}

# name: (ranks, model, config overrides)
RUNS = {
    "gpt2_fp32": (1, GPT2, {}),
    "gpt2_bf16": (1, GPT2, {"bf16": {"enabled": True}}),
    "gpt2_fp16": (1, GPT2, {"fp16": {"enabled": True, "initial_scale_power": 12}}),
    "llama_fp32": (1, LLAMA, {}),
    "llama_bf16": (1, LLAMA, {"bf16": {"enabled": True}}),
    "llama_fp16": (1, LLAMA, {"fp16": {"enabled": True, "initial_scale_power": 12}}),
    "gpt2_dp2_zero0": (2, GPT2, {"zero_optimization": {"stage": 0}}),
    "gpt2_dp2_zero1": (2, GPT2, {"zero_optimization": {"stage": 1}}),
    "gpt2_dp2_zero2": (2, GPT2, {"zero_optimization": {"stage": 2}}),
    "gpt2_dp2_zero3": (2, GPT2, {"zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0}}),
    "gpt2_bf16_dp2_zero2": (2, GPT2, {"bf16": {"enabled": True}, "zero_optimization": {"stage": 2}}),
    "gpt2_pp2": (2, GPT2, {"parallel": {"pp": 2}}),
    "gpt2_tp2": (2, GPT2, {"parallel": {"tp": 2}}),
    "llama_tp2_bf16": (2, LLAMA, {"parallel": {"tp": 2}, "bf16": {"enabled": True}}),
    "gpt2_dp2_pp2_tp2": (8, GPT2, {"parallel": {"pp": 2, "tp": 2}, "zero_optimization": {"stage": 1}}),
    "gpt2_checkpointing": (1, GPT2, {"activation_checkpointing": {"number_checkpoints": 2}}),
    "gpt2_nvme_offload": (2, GPT2, {"zero_optimization": {
        "stage": 3, "stage3_param_persistence_threshold": 0, "sub_group_size": 4096,
        "offload_optimizer": {"device": "nvme", "nvme_path": "SWAP"},
        "offload_param": {"device": "nvme", "nvme_path": "SWAP", "max_in_cpu": 0}}}),
    "gpt2_param_server_sync": (3, GPT2, {"parameter_server": {"servers": 1, "mode": "sync"}}),
    "gpt2_onebit_adam": (2, GPT2, {"optimizer": {"type": "OneBitAdam", "params": {"lr": 1e-3, "freeze_step": 2}}}),
}


def config(name, ranks, model, extra, work):
    workers = ranks - extra.get("parameter_server", {}).get("servers", 0)
    dp = workers // (extra.get("parallel", {}).get("pp", 1) * extra.get("parallel", {}).get("tp", 1))
    cfg = {
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2, "train_batch_size": 4 * dp,
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "weight_decay": 0.1}},
        "gradient_clipping": 1.0,
        "model": dict(model, vocab_size=257, padded_vocab_size=320),
        "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
        "training": {"steps": 3, "eval_interval": 0, "output_dir": name, "save_at_end": True, "seed": 7},
    }
    cfg.update(json.loads(json.dumps(extra).replace("SWAP", os.path.join(work, "swap"))))
    return cfg


def run(binary, name, work):
    ranks, model, extra = RUNS[name]
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(config(name, ranks, model, extra, work), f)
    cmd = [binary, "train", "--config", path]
    if ranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)] + cmd
    p = subprocess.run(cmd, cwd=work, env=dict(os.environ, **ENV), capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (name, p.returncode, (p.stdout + p.stderr)[-3000:]))
    csv_path = os.path.join(work, name, "metrics.csv")
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    else:  # the parameter-server job writes no metrics.csv: its printed step lines, and the digest
        rows = [{"loss_hex": l.split("| loss ")[1].split()[0], "grad_norm": l.split("| norm ")[1].split()[0]}
                for l in p.stdout.splitlines() if l.startswith("step ") and "| loss " in l]
    manifest_dir = os.path.join(work, name, "checkpoints", "global_step3")
    with open(os.path.join(manifest_dir, "manifest.json")) as f:
        pieces = json.load(f)["pieces"]
    digest = hashlib.sha256()
    for p_ in sorted((p_ for p_ in pieces if p_["kind"] == "param"), key=lambda p_: (p_["tensor"], p_["begin"])):
        digest.update(("%s %d %d %s\n" % (p_["tensor"], p_["begin"], p_["end"], p_["checksum"])).encode())
    return {"loss_hex": [r["loss_hex"] for r in rows], "grad_norm": [r["grad_norm"] for r in rows],
            "params_sha256": digest.hexdigest()}


def main():
    binary = os.path.abspath(sys.argv[1])
    write = "--write" in sys.argv[2:]
    results = {}
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "swap"))
        with open(os.path.join(work, "corpus.txt"), "w") as f:
            f.write(("the quick brown fox jumps over the lazy dog; " * 30 + "\n%\n") * 30)
        subprocess.run([binary, "prepare", "corpus.txt", "-o", "train.bin", "--separator", "%", "--tokenizer", "byte"],
                       cwd=work, check=True, capture_output=True, env=dict(os.environ, **ENV))
        for name in RUNS:
            results[name] = run(binary, name, work)
            print("%-24s losses %s" % (name, " ".join(results[name]["loss_hex"])), flush=True)
    if write:
        with open(GOLDEN, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
        print("wrote %s (%d runs)" % (GOLDEN, len(results)))
        return 0
    with open(GOLDEN) as f:
        golden = json.load(f)
    bad = []
    for name in sorted(set(golden) | set(results)):
        if name not in golden or name not in results:
            bad.append("%s: only in %s" % (name, "golden.json" if name in golden else "this build"))
            continue
        for key in ("loss_hex", "grad_norm", "params_sha256"):
            if golden[name][key] != results[name][key]:
                bad.append("%s: %s was %s, now %s" % (name, key, golden[name][key], results[name][key]))
    for b in bad:
        print("DIFFERS " + b)
    print(json.dumps({"golden_runs": len(results), "identical": len(results) - len({b.split(":")[0] for b in bad})}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
