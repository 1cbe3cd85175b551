#!/usr/bin/python3
"""Times what DeepSpeed does for a checkpoint of GPT-2 small with AdamW: torch.save of
the model's state_dict and the optimizer's (weights and both moments, pickled), made
durable with fsync (torch.save alone does not sync; zerotrain's save does), and
torch.load of both. One JSON line with medians.
  torch_checkpoint.py [--dir D] [--reps R] [--threads P]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import torch  # noqa: E402
from gpt2_reference import Gpt2  # noqa: E402


def save_durably(obj, path):
    with open(path, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/zt_checkpoint_bench_torch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model = Gpt2({"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab_size": 50257, "n_positions": 1024})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for p in model.parameters():
        p.grad = torch.full_like(p, 1e-3)
    opt.step()  # creates exp_avg and exp_avg_sq
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    save, load, size = [], [], 0
    for _ in range(a.reps):
        t = time.perf_counter()
        save_durably(model.state_dict(), f"{a.dir}/mp_rank_00_model_states.pt")
        save_durably(opt.state_dict(), f"{a.dir}/optim_states.pt")
        dfd = os.open(a.dir, os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
        save.append(time.perf_counter() - t)
        size = sum(os.path.getsize(f"{a.dir}/{n}") for n in os.listdir(a.dir))
        t = time.perf_counter()
        model.load_state_dict(torch.load(f"{a.dir}/mp_rank_00_model_states.pt"))
        opt.load_state_dict(torch.load(f"{a.dir}/optim_states.pt"))
        load.append(time.perf_counter() - t)
    shutil.rmtree(a.dir, ignore_errors=True)
    print(json.dumps({"impl": "pytorch", "bytes": size, "save_ms": 1e3 * statistics.median(save),
                      "load_ms": 1e3 * statistics.median(load)}))


if __name__ == "__main__":
    main()
