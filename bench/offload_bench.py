#!/usr/bin/env python3
"""Driver of bench/offload.sh (see there): fio's disk bandwidth, then zerotrain train runs
in memory and with NVMe optimizer offload, then the gpt2-xl headline. Each run is a fresh
process; its peak RSS comes from wait4, its step times and losses from metrics.csv, its
disk traffic from the end-of-run report."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def fio(directory, rw, size, depth):
    """Bytes/s of fio's sequential O_DIRECT job (rw: write, read, or rw = 50/50 mixed: read + write)."""
    cmd = ["fio", "--name=zt", f"--filename={directory}/fio.tmp", f"--size={size}", "--bs=1M", "--direct=1",
           f"--rw={rw}", "--ioengine=io_uring", f"--iodepth={depth}", "--output-format=json"]
    job = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["jobs"][0]
    return job["read"]["bw_bytes"] + job["write"]["bw_bytes"]


def corpus(directory, zerotrain):
    words = "the quick brown fox jumps over a lazy dog while seven wise owls count stars".split()
    lines = [" ".join(words[(i * 7 + j) % len(words)] for j in range(12)) for i in range(20000)]
    with open(f"{directory}/corpus.txt", "w") as f:
        f.write("\n".join(lines))
    subprocess.run([zerotrain, "prepare", "corpus.txt", "-o", "train.bin", "--tokenizer", "byte"], cwd=directory,
                   check=True, capture_output=True)


def config(directory, name, preset, batch, seq, accum, steps, nvme, sub_group, lr=3e-4):
    zero = {"stage": 0}
    if nvme:
        zero.update({"sub_group_size": sub_group, "offload_optimizer": {"device": "nvme", "nvme_path": "swap"}})
    c = {"train_batch_size": batch * accum, "train_micro_batch_size_per_gpu": batch,
         "optimizer": {"type": "AdamW", "params": {"lr": lr, "weight_decay": 0.1}},
         "gradient_clipping": 1.0, "steps_per_print": 1, "zero_optimization": zero,
         "model": {"preset": preset, "vocab_size": 50257},
         "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": seq},
         "training": {"steps": steps, "eval_interval": 0, "output_dir": name, "save_at_end": False}}
    with open(f"{directory}/{name}.json", "w") as f:
        json.dump(c, f)
    return f"{name}.json"


def run(zerotrain, directory, cfg, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.time()
    p = subprocess.Popen([zerotrain, "train", "--config", cfg], cwd=directory, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"zerotrain train --config {cfg} failed:\n{out}")
    name = cfg[:-5]
    rows = []
    with open(f"{directory}/{name}/metrics.csv") as f:
        header = None
        for line in f:
            if line.startswith("#"):
                continue
            if header is None:
                header = line.strip().split(",")
                continue
            rows.append(dict(zip(header, line.strip().split(","))))
    moved = re.search(r"last step read ([\d.]+) (\w+), wrote ([\d.]+) (\w+)", out)
    read = float(moved.group(1)) * UNITS[moved.group(2)] if moved else 0.0
    wrote = float(moved.group(3)) * UNITS[moved.group(4)] if moved else 0.0
    steps = [float(r["forward_ms"]) + float(r["backward_ms"]) + float(r["optimizer_ms"]) for r in rows]
    return {"step_ms": steps, "opt_ms": [float(r["optimizer_ms"]) for r in rows],
            "loss": [float(r["loss"]) for r in rows], "rss": usage.ru_maxrss * 1024, "read": read, "wrote": wrote,
            "wall_s": time.time() - t0, "banner": [l for l in out.splitlines() if l.startswith(("backend:", "offload:"))],
            "params": float(re.search(r"([\d.]+) M parameters", out).group(1)) * 1e6}


def calibrate(zerotrain, directory, cfgs, threads):
    """zerotrain calibrate for the runs' kernels and their swap directory, as a user would before planning."""
    args = [zerotrain, "calibrate", "--skip-comm", "--micro-batches", "4", "--tp", "1", "-o", "cal.json"]
    for c in cfgs:
        args += ["--config", c]
    out = subprocess.run(args, cwd=directory, env=dict(os.environ, OMP_NUM_THREADS=str(threads)), check=True,
                         capture_output=True, text=True).stdout
    print("\n".join("calibrate: " + l for l in out.splitlines() if l.startswith(("compute", "swap directory"))))


def predict(zerotrain, directory, cfg, threads):
    """estimate's step and optimizer seconds for a config from cal.json."""
    out = subprocess.run([zerotrain, "estimate", "--config", cfg, "--calibration", "cal.json", "--threads-per-rank",
                          str(threads), "--json"], cwd=directory, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    return j["step_s"], j["breakdown"]["optimizer_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-xl", action="store_true")
    a = ap.parse_args()
    d = os.path.abspath(a.dir)
    a.zerotrain = os.path.abspath(a.zerotrain)
    os.makedirs(f"{d}/swap", exist_ok=True)
    # The disk's best: queue depth 8 (the aio default the swapper runs with) and 32, the faster of each.
    bw = {(rw, q): fio(d, rw, "4G", q) for q in (8, 32) for rw in ("write", "read", "rw")}
    os.remove(f"{d}/fio.tmp")
    bw_w, bw_r, bw_m = (max(bw[(rw, 8)], bw[(rw, 32)]) for rw in ("write", "read", "rw"))
    for q in (8, 32):
        print(f"disk (fio, O_DIRECT, 1 MiB, io_uring, depth {q}): write {bw[('write', q)] / 1e6:.0f} MB/s, read "
              f"{bw[('read', q)] / 1e6:.0f} MB/s, 50/50 mixed {bw[('rw', q)] / 1e6:.0f} MB/s")
    corpus(d, a.zerotrain)
    runs_of = {f"gpt2_a{accum}_{'nvme' if nvme else 'mem'}": (accum, steps, nvme)
               for accum, steps in ((1, 6), (16, 3)) for nvme in (False, True)}
    cfgs = {n: config(d, n, "gpt2", 4, 64, accum, steps, nvme, 50_000_000) for n, (accum, steps, nvme) in runs_of.items()}
    calibrate(a.zerotrain, d, cfgs.values(), a.threads)
    res = {}
    for rnd in range(a.rounds):
        for name, cfg in cfgs.items():
            r = run(a.zerotrain, d, cfg, a.threads)
            res.setdefault(name, []).append(r)
            print(f"round {rnd + 1} {name}: steps {['%.0f' % s for s in r['step_ms']]} ms, optimizer "
                  f"{['%.0f' % s for s in r['opt_ms']]} ms, peak RSS {r['rss'] / 2**30:.2f} GiB", file=sys.stderr)
    for line in res["gpt2_a1_nvme"][0]["banner"]:
        print(line)
    med = lambda runs, k: statistics.median(x for r in runs for x in r[k][1:])  # the first step warms up
    print(f"{'run':16} {'ms/step':>9} {'opt ms':>8} {'disk read':>10} {'written':>9} {'swap GB/s':>9} {'peak RSS':>9} "
          f"{'predicted':>9} {'err':>7} {'pred opt':>8} {'err':>7}")
    out = {"bench": "offload", "fio_read_mb_s": round(bw_r / 1e6), "fio_write_mb_s": round(bw_w / 1e6),
           "fio_mixed_mb_s": round(bw_m / 1e6)}
    fractions = []
    for name, runs in res.items():
        step, opt = med(runs, "step_ms"), med(runs, "opt_ms")
        read, wrote = runs[0]["read"], runs[0]["wrote"]
        rate = (read + wrote) / (opt / 1e3) / 1e9 if read else 0.0
        p_step, p_opt = (1e3 * x for x in predict(a.zerotrain, d, cfgs[name], a.threads))
        print(f"{name:16} {step:9.0f} {opt:8.0f} {read / 1e9:9.2f}G {wrote / 1e9:8.2f}G {rate:9.2f} "
              f"{max(r['rss'] for r in runs) / 2**30:8.2f}G {p_step:9.0f} {p_step / step - 1:+7.3f} {p_opt:8.0f} "
              f"{p_opt / opt - 1:+7.3f}")
        out.setdefault("predicted_step_rel_error", {})[name] = round(p_step / step - 1, 3)
        out.setdefault("predicted_optimizer_rel_error", {})[name] = round(p_opt / opt - 1, 3)
        if read:
            # fio's time for the same bytes: the faster of reading then writing, and both mixed
            t_fio = min(read / bw_r + wrote / bw_w, (read + wrote) / bw_m)
            fractions += [t_fio / (x / 1e3) for r in runs for x in r["opt_ms"][1:]]
    for accum in (1, 16):
        ratio = med(res[f"gpt2_a{accum}_nvme"], "step_ms") / med(res[f"gpt2_a{accum}_mem"], "step_ms")
        out[f"offload_over_inmemory_accum{accum}"] = round(ratio, 3)
    out["io_fraction"] = round(statistics.median(fractions), 3)
    out["io_fraction_range"] = [round(min(fractions), 3), round(max(fractions), 3)]
    out["gpt2_peak_rss_gb"] = {n: round(max(r["rss"] for r in runs) / 2**30, 2) for n, runs in res.items()}
    if not a.skip_xl:
        xl = run(a.zerotrain, d, config(d, "gpt2_xl_nvme", "gpt2-xl", 1, 128, 1, 3, True, 50_000_000, lr=2e-6), a.threads)
        for line in xl["banner"]:
            print(line)
        print(f"gpt2-xl: steps {['%.1f' % (s / 1e3) for s in xl['step_ms']]} s (optimizer "
              f"{['%.1f' % (s / 1e3) for s in xl['opt_ms']]} s), losses {xl['loss']}, read {xl['read'] / 1e9:.1f} GB, "
              f"wrote {xl['wrote'] / 1e9:.1f} GB per step, peak RSS {xl['rss'] / 2**30:.2f} GiB, "
              f"wall {xl['wall_s']:.0f} s")
        out.update({"largest": "gpt2-xl", "largest_params": round(xl["params"], -4), "largest_peak_rss_gb": round(xl["rss"] / 2**30, 2),
                    "largest_step_s": round(statistics.median(xl["step_ms"][1:]) / 1e3, 1),
                    "largest_losses": [round(x, 4) for x in xl["loss"]],
                    "largest_disk_gb_per_step": round((xl["read"] + xl["wrote"]) / 1e9, 1),
                    "largest_io_fraction": round(statistics.median(
                        min(xl["read"] / bw_r + xl["wrote"] / bw_w, (xl["read"] + xl["wrote"]) / bw_m) / (x / 1e3)
                        for x in xl["opt_ms"][1:]), 3)})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
