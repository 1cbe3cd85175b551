#!/usr/bin/env python3
"""Runs every DeepSpeed config of tests/configs/wild/ for one training step.

Each file is kept verbatim (SOURCES.md says where it comes from). The test gives it
zerotrain's own sections (a tiny byte-level model, a small corpus, one step), points any
nvme_path at a scratch directory, gives a micro-batch of 2 to the templates that have no
batch key at all (their launcher fills it; DeepSpeed refuses them as given), and launches as many ranks as the file's batch triple
implies (train_batch_size / (micro-batch x accumulation), at most 8). A strict-JSON file
must then either train and save a checkpoint that resumes (`train --resume` runs a second
step and saves again) and whose result opens (`zerotrain eval` loads it), or be refused with exit 2 for a key that needs a GPU or a
feature listed as not built, naming the key's JSON pointer, that the README's list of
refusals (between the wild-refusals markers) names. Anything else fails the test, and so
do fewer than 90 % of the strict files training (issue 33). Non-strict files (comments,
shell placeholders) are counted and skipped.

usage: run_wild.py ZEROTRAIN_BINARY [WILD_DIR]   (prints a table and the counts)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

TINY = {
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 32, "n_positions": 16},
    "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 8},
}
REFUSAL = re.compile(r"(/[A-Za-z0-9_/]*): (needs a GPU|not built|needs a network service)")


def strict_load(path):
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)
    with open(path) as f:
        return json.load(f, object_pairs_hook=no_duplicates)


def point_nvme(node, swap):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "nvme_path" and isinstance(v, str):
                node[k] = swap
            else:
                point_nvme(v, swap)


def ranks_for(cfg):
    """Data-parallel size from the batch triple, times the model-parallel degrees."""
    t, m, g = (cfg.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                    "gradient_accumulation_steps"))
    dp = 1
    if all(isinstance(x, int) for x in (t, m, g)) and m * g > 0 and t % (m * g) == 0:
        dp = t // (m * g)
    tp = cfg.get("tensor_parallel", {}).get("autotp_size", 1)
    pp = cfg.get("pipeline", {}).get("stages", 1)
    model = (tp if isinstance(tp, int) else 1) * (pp if isinstance(pp, int) else 1)
    return max(1, min(8, dp * model))


def check_checkpoint(binary, work, out, conf, launch, env):
    """'' if the run saved a checkpoint that resumes for a second step and whose result
    loads (zerotrain eval), else what went wrong."""
    ckpt = os.path.join(work, out, "checkpoints")
    if not os.path.exists(os.path.join(ckpt, "latest")):
        return "no %s/checkpoints/latest" % out
    with open(conf) as f:
        cfg = json.load(f)
    cfg["training"]["steps"] = 2
    conf2 = conf.replace(".json", "_resume.json")
    with open(conf2, "w") as f:
        json.dump(cfg, f)
    p = subprocess.run(launch + [binary, "train", "--config", conf2, "--resume", ckpt], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or "resumed from" not in p.stdout:
        return "resume exit %d: %s" % (p.returncode, (p.stdout + p.stderr).strip().splitlines()[-1:])
    with open(os.path.join(ckpt, "latest")) as f:
        if "global_step2" not in f.read():
            return "the resumed run saved no global_step2"
    p = subprocess.run([binary, "eval", ckpt, "--data", "train.bin"], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        return "zerotrain eval exit %d: %s" % (p.returncode, (p.stdout + p.stderr).strip().splitlines()[-1:])
    return ""


def run_one(binary, path, work, index):
    cfg = strict_load(path)
    out = "run%d" % index
    cfg.update(json.loads(json.dumps(TINY)))
    ltd = cfg.get("data_efficiency", {}).get("data_routing", {}).get("random_ltd", {})
    if isinstance(ltd.get("total_layer_num"), int):  # random-LTD names blocks: the model gets that many
        cfg["model"]["n_layer"] = ltd["total_layer_num"]
    cfg["training"] = {"steps": 1, "eval_interval": 0, "output_dir": out, "save_at_end": True,
                       "metrics_csv": False}
    point_nvme(cfg, os.path.join(work, "swap"))
    supplied = not any(k in cfg for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                          "gradient_accumulation_steps"))
    if supplied:  # a template whose launcher fills the batch (DeepSpeed refuses it as given too)
        cfg["train_micro_batch_size_per_gpu"] = 2
    conf = os.path.join(work, out + ".json")
    with open(conf, "w") as f:
        json.dump(cfg, f)
    np = ranks_for(cfg)
    launch = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(np)] if np > 1 else []
    cmd = launch + [binary, "train", "--config", conf]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    text = p.stdout + p.stderr
    if p.returncode == 0:
        saved = check_checkpoint(binary, work, out, conf, launch, env)
        if saved:
            return "FAILED", np, "trained, but its checkpoint: " + saved
        return "trains", np, "(batch supplied by the test: the file has none)" if supplied else ""
    m = REFUSAL.search(text)
    if p.returncode == 2 and m:
        return "refused", np, m.group(1) + ": " + m.group(2)
    last = [l for l in text.strip().splitlines() if l.strip()][-3:]
    return "FAILED", np, " | ".join(last)


def readme_refusals():
    """The JSON pointers the README lists as refused wild-config keys."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    text = open(readme).read()
    block = text.split("<!-- wild-refusals -->")[1].split("<!-- /wild-refusals -->")[0]
    return set(re.findall(r"^- `(/[^`]+)`", block, re.M))


def main():
    binary = os.path.abspath(sys.argv[1])
    wild = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "wild")
    files = sorted(f for f in os.listdir(wild) if f.endswith(".json"))
    counts = {"trains": 0, "refused": 0, "FAILED": 0, "not strict JSON": 0}
    listed = readme_refusals()
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "swap"))
        with open(os.path.join(work, "corpus.txt"), "w") as f:
            f.write(("the quick brown fox jumps over the lazy dog. " * 40 + "\n%\n") * 20)
        subprocess.run([binary, "prepare", "corpus.txt", "-o", "train.bin", "--separator", "%", "--tokenizer", "byte"],
                       cwd=work, check=True, capture_output=True)
        for i, name in enumerate(files):
            try:
                outcome, np, why = run_one(binary, os.path.join(wild, name), work, i)
            except (ValueError, json.JSONDecodeError) as e:
                outcome, np, why = "not strict JSON", 0, str(e).splitlines()[0]
            if outcome == "refused" and REFUSAL.search(why).group(1) not in listed:
                outcome, why = "FAILED", why + " (a refusal the README's list does not name)"
            counts[outcome] += 1
            print("%-16s np=%d %s %s" % (outcome, np, name, why), flush=True)
    strict = counts["trains"] + counts["refused"] + counts["FAILED"]
    print(json.dumps({"wild_configs": len(files), **counts, "train_share": round(counts["trains"] / max(1, strict), 4)}))
    if counts["trains"] < 0.9 * strict:
        print("FAILED: fewer than 90 %% of the %d strict configs train" % strict)
        return 1
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
