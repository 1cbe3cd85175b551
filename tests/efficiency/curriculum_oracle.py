#!/usr/bin/python3
"""Independent statement of DeepSpeed's curriculum-learning difficulty schedules.

Read from DeepSpeed (deepspeedai/DeepSpeed @ edaa7221):
  deepspeed/runtime/data_pipeline/curriculum_scheduler.py  CurriculumScheduler.get_difficulty,
      __fixed_root_get_difficulty, __fixed_discrete_get_difficulty, update_difficulty
  deepspeed/runtime/engine.py  DeepSpeedEngine._forward_prologue (legacy block: calls
      update_difficulty(global_steps + 1) on every training forward, passes curriculum_seqlen)
  deepspeed/runtime/data_pipeline/data_sampling/data_sampler.py  DeepSpeedDataSampler
      (data_efficiency form: curriculum_step += 1 per global batch, then update_difficulty;
      get_sample_based_on_metric_value / _percentile pick the eligible samples)
  Megatron-DeepSpeed pretrain_gpt.py data_post_process (seqlen_truncate / seqlen_reshape) and
      megatron/model/gpt_model.py GPTModel.forward (legacy curriculum_seqlen truncation).

The rule, in words
------------------
A schedule maps a 1-based schedule step s to a difficulty.
  fixed_linear / fixed_root (fixed_linear is fixed_root with root_degree = 1):
      F = floor( (s / total_curriculum_step) ** (1 / root_degree) * (max - min) + min )
      d = min( F - (F mod difficulty_step), max_difficulty )
    computed in double precision exactly in that order. Nothing clamps s: past
    total_curriculum_step F keeps growing and only the final min() holds d at max.
  fixed_discrete (difficulty list D, max_step list M, len(D) == len(M) + 1):
      d = D[-1] if s > M[-1] else D[first i with s <= M[i]]
  The scheduler is stateful: it starts with current = min_difficulty and replaces current by
  the schedule value only while current < max_difficulty; once current reaches (or passes)
  max_difficulty it is frozen.
Which s: the legacy top-level block evaluates s = global_steps + 1 (global_steps = number of
optimizer steps already taken, 0 at the start) on every training forward, so every micro-batch
of optimizer step k uses d(k + 1). The data_efficiency sampler evaluates s = curriculum_step,
which it increments once per global batch it draws (first batch: s = 1).
seqlen: Megatron truncates a batch whose length exceeds d to its first d positions (tokens,
position ids, labels, loss mask, attention mask [:, :, :d, :d]); a d >= the batch length leaves
it alone. seqlen_truncate keeps the first d + 1 tokens of each text row (so d inputs/labels).
difficulty_step is a bare modulus: if min_difficulty is not a multiple of it the early values
fall below min_difficulty, and if min_difficulty < difficulty_step the first values are 0 (a
zero-length batch); difficulty_step = 0 is a division by zero in DeepSpeed.

CLI
---
  curriculum_oracle.py --json --config '{"min_difficulty":8,"max_difficulty":1024,
      "schedule_type":"fixed_linear","schedule_config":{"total_curriculum_step":100,
      "difficulty_step":8}}' --steps 0:5 [--step-kind global_steps|schedule]
      [--stateless] [--seq-length 1024] [--reshape-batch B]
  Output: {"results": [{"global_steps", "schedule_step", "difficulty", "seqlen",
           "truncated", "valid", ["reshape": {...}]}...]}
  The config may also be a whole DeepSpeed config: its top-level "curriculum_learning" block is
  used, or with --metric NAME the data_efficiency metric of that name.
  curriculum_oracle.py --json --eligible --config '{"metric_values":[...],
      "difficulty_type":"value"|"percentile","max_difficulty":100,"difficulties":[...]}'
  prints, per difficulty, the samples eligible at that difficulty and the new cluster the
  sampler would build when moving to it from the previous one (before shuffling).
  curriculum_oracle.py --self-test
"""
import argparse
import math
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
from _common import SelfTest, add_common_args, emit, load_config, parse_steps


class Schedule:
    """DeepSpeed's CurriculumScheduler, restated."""

    def __init__(self, cfg):
        for key in ("min_difficulty", "max_difficulty", "schedule_type"):
            if key not in cfg:
                raise ValueError(f"curriculum config needs {key!r}")
        self.min = cfg["min_difficulty"]
        self.max = cfg["max_difficulty"]
        self.type = cfg["schedule_type"]
        self.sc = cfg.get("schedule_config", {})
        self.current = self.min
        if self.type == "fixed_discrete":
            d, m = self.sc["difficulty"], self.sc["max_step"]
            if not (len(m) > 0 and len(d) > 0 and len(d) == len(m) + 1):
                raise ValueError("fixed_discrete needs len(difficulty) == len(max_step) + 1 > 1")
        elif self.type in ("fixed_linear", "fixed_root"):
            for key in ("total_curriculum_step", "difficulty_step"):
                if key not in self.sc:
                    raise ValueError(f"{self.type} needs schedule_config.{key}")
            if self.type == "fixed_root" and "root_degree" not in self.sc:
                raise ValueError("fixed_root needs schedule_config.root_degree")
        elif self.type == "custom":
            raise ValueError("custom schedules are a user callback; nothing to state")
        else:
            raise ValueError(f"unsupported schedule_type {self.type!r}")

    def value(self, s):
        """get_difficulty(s): the stateless schedule value at schedule step s."""
        if self.type == "fixed_discrete":
            d, m = self.sc["difficulty"], self.sc["max_step"]
            if s > m[-1]:
                return d[-1]
            for i in range(len(m)):
                if s <= m[i]:
                    return d[i]
        root = 1 if self.type == "fixed_linear" else self.sc["root_degree"]
        x = (float(s) / self.sc["total_curriculum_step"]) ** (1.0 / root)
        f = math.floor(x * (self.max - self.min) + self.min)
        f -= f % self.sc["difficulty_step"]
        return min(f, self.max)

    def update(self, s):
        """update_difficulty(s): replace current while it is below max_difficulty."""
        if self.current < self.max:
            self.current = self.value(s)
        return self.current


def pick_config(cfg, metric=None):
    if metric is not None:
        return cfg["data_efficiency"]["data_sampling"]["curriculum_learning"]["curriculum_metrics"][metric]
    if "min_difficulty" in cfg:
        return cfg
    if "curriculum_learning" in cfg:
        return cfg["curriculum_learning"]
    raise ValueError("config has no curriculum block")


def reshape_rows(batch, seq_length, d):
    """Megatron data_post_process for seqlen_reshape: text rows are seq_length + 1 long."""
    if d >= seq_length:
        return {"rows": batch, "row_tokens": seq_length + 1, "changed": False}
    width = d + 1
    per_row = (seq_length + 1) // width
    available = batch * per_row + batch  # the reshaped part plus each row's last d + 1 tokens
    num_row = math.ceil(batch * (seq_length + 1) / width)
    num_row = min(num_row, available)
    if num_row > 1 and num_row % 2 != 0:
        num_row -= 1
    return {"rows": num_row, "row_tokens": width, "changed": True,
            "note": "rows are: the first per_row*(d+1) tokens of each row cut into d+1 pieces, "
                    "row after row, then the last d+1 tokens of every row; the first 'rows' kept"}


def run_schedule(cfg, steps, step_kind, stateless, seq_length, reshape_batch, curriculum_type):
    sch = Schedule(cfg)
    out = []
    for k in steps:
        s = k + 1 if step_kind == "global_steps" else k
        d = sch.value(s) if stateless else sch.update(s)
        row = {"global_steps": k if step_kind == "global_steps" else None,
               "schedule_step": s, "difficulty": d}
        if curriculum_type in (None, "seqlen", "seqlen_truncate", "seqlen_reshape"):
            row["valid"] = d >= 1
            if seq_length is not None:
                row["seqlen"] = min(d, seq_length)
                row["truncated"] = d < seq_length
            if reshape_batch is not None and seq_length is not None:
                row["reshape"] = reshape_rows(reshape_batch, seq_length, d)
        out.append(row)
    return out


def eligible(cfg):
    """Which samples the data sampler may draw at each difficulty (and the new cluster)."""
    values = cfg["metric_values"]
    dtype = cfg["difficulty_type"]
    n = len(values)
    # index_to_sample rows: one per distinct metric value, ascending; samples ascending in a row.
    distinct = sorted(set(values))
    rows = [[i for i in range(n) if values[i] == v] for v in distinct]
    prev = float("-inf") if dtype == "value" else 0
    res = []
    for cur in cfg["difficulties"]:
        if dtype == "value":
            new = [i for v, row in zip(distinct, rows) if prev < v <= cur for i in row]
            allowed = sorted(i for i in range(n) if values[i] <= cur)
        elif dtype == "percentile":
            maxp = cfg["max_difficulty"]
            spp = n // maxp
            flat = [i for row in rows for i in row]

            def window(a, b):
                start, end = spp * a, spp * b
                if b == maxp:
                    end = n
                return flat[start:end]
            new = window(prev, cur)
            allowed = sorted(window(0, cur))
        else:
            raise ValueError("difficulty_type must be value or percentile")
        res.append({"difficulty": cur, "new_cluster": new, "eligible": allowed})
        prev = cur
    return res


def self_test():
    t = SelfTest("curriculum_oracle")
    # DeepSpeed's own unit test (tests/unit/runtime/test_data_efficiency.py, test_fixed_linear):
    lin = {"min_difficulty": 2, "max_difficulty": 10, "schedule_type": "fixed_linear",
           "schedule_config": {"total_curriculum_step": 8, "difficulty_step": 2}}
    got = [r["difficulty"] for r in run_schedule(lin, list(range(10)), "global_steps", False, None, None, None)]
    t.eq("fixed_linear min2 max10 T8 step2, global_steps 0..9", got, [2, 4, 4, 6, 6, 8, 8, 10, 10, 10])
    # ... and test_fixed_discrete:
    disc = {"min_difficulty": 1, "max_difficulty": 5, "schedule_type": "fixed_discrete",
            "schedule_config": {"difficulty": [1, 2, 3, 4, 5], "max_step": [2, 4, 6, 8]}}
    got = [r["difficulty"] for r in run_schedule(disc, list(range(10)), "global_steps", False, None, None, None)]
    t.eq("fixed_discrete [1..5]/[2,4,6,8], global_steps 0..9", got, [1, 1, 2, 2, 3, 3, 4, 4, 5, 5])
    # Hand-computed fixed_root: min 8, max 1024, T 100, step 8, root 2.
    root = {"min_difficulty": 8, "max_difficulty": 1024, "schedule_type": "fixed_root",
            "schedule_config": {"total_curriculum_step": 100, "difficulty_step": 8, "root_degree": 2}}
    sch = Schedule(root)
    # s=1: sqrt(0.01)=0.1 -> 0.1*1016+8 = 109.6 -> 109 -> 104
    t.eq("fixed_root s=1", sch.value(1), 104)
    # s=25: 0.5*1016+8 = 516 -> 512
    t.eq("fixed_root s=25", sch.value(25), 512)
    t.eq("fixed_root s=100", sch.value(100), 1024)
    t.eq("fixed_root s=0 (never used by the engine)", sch.value(0), 8)
    # min below difficulty_step: the first difficulty is 0 (a zero-length batch).
    bad = {"min_difficulty": 1, "max_difficulty": 64, "schedule_type": "fixed_linear",
           "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}
    r = run_schedule(bad, [0], "global_steps", False, 64, None, "seqlen")[0]
    t.eq("min 1 < difficulty_step 8: first difficulty", r["difficulty"], 0)
    t.eq("min 1 < difficulty_step 8: valid", r["valid"], False)
    # max not a multiple of difficulty_step: reached only past total_curriculum_step.
    odd = {"min_difficulty": 8, "max_difficulty": 100, "schedule_type": "fixed_linear",
           "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}
    got = [r["difficulty"] for r in run_schedule(odd, [9, 10], "global_steps", False, None, None, None)]
    # s=10: 100 -> 96; s=11: 1.1*92+8 = 109.2 -> 109 -> 104 -> min(104, 100) = 100
    t.eq("max 100 not multiple of 8: s=10, s=11", got, [96, 100])
    # Seqlen truncation for a 1024-token batch.
    rows = run_schedule(lin | {"max_difficulty": 10}, [0, 7], "global_steps", False, 6, None, "seqlen")
    t.eq("seqlen with seq_length 6", [(x["seqlen"], x["truncated"]) for x in rows], [(2, True), (6, False)])
    # Percentile clustering: 10 samples, values 5..0 style; spp = 10 // 100 = 0 -> empty until 100.
    el = eligible({"metric_values": [3, 1, 2, 1, 3, 2, 1, 2, 3, 4], "difficulty_type": "value",
                   "difficulties": [1, 2, 4]})
    t.eq("value-based eligibility at 1", el[0]["eligible"], [1, 3, 6])
    t.eq("value-based new cluster 1 -> 2", el[1]["new_cluster"], [2, 5, 7])
    t.eq("value-based eligibility at 4", el[2]["eligible"], list(range(10)))
    el = eligible({"metric_values": [3, 1, 2, 1, 3, 2, 1, 2, 3, 4], "difficulty_type": "percentile",
                   "max_difficulty": 5, "difficulties": [1, 3, 5]})
    # sorted order: value1 [1,3,6], value2 [2,5,7], value3 [0,4,8], value4 [9]; spp = 10//5 = 2
    t.eq("percentile window (0,1]", el[0]["new_cluster"], [1, 3])
    t.eq("percentile window (1,3]", el[1]["new_cluster"], [6, 2, 5, 7])
    t.eq("percentile window (3,5] takes the rest", el[2]["new_cluster"], [0, 4, 8, 9])
    t.eq("seqlen_reshape rows, B=4 S=8 d=3", reshape_rows(4, 8, 3)["rows"], 8)
    t.finish()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(p)
    p.add_argument("--step-kind", choices=["global_steps", "schedule"], default="global_steps",
                   help="global_steps: the engine's 0-based optimizer step (schedule step = +1); "
                        "schedule: the value handed to get_difficulty (e.g. the sampler's curriculum_step)")
    p.add_argument("--stateless", action="store_true", help="print get_difficulty(s) without the max freeze")
    p.add_argument("--seq-length", type=int, help="full sequence length, to state the truncation")
    p.add_argument("--reshape-batch", type=int, help="micro-batch rows, to state seqlen_reshape")
    p.add_argument("--metric", help="take data_efficiency...curriculum_metrics[METRIC] from a full config")
    p.add_argument("--eligible", action="store_true", help="sample eligibility mode (see docstring)")
    args = p.parse_args()
    if args.self_test:
        self_test()
    cfg = load_config(args)
    if args.eligible:
        emit({"results": eligible(cfg)}, args.json)
        return
    block = pick_config(cfg, args.metric)
    ctype = block.get("curriculum_type", args.metric)
    steps = parse_steps(args.steps) if args.steps else list(range(10))
    res = run_schedule(block, steps, args.step_kind, args.stateless, args.seq_length,
                       args.reshape_batch, ctype)
    emit({"schedule_type": block["schedule_type"], "step_kind": args.step_kind, "results": res}, args.json,
         [[r["schedule_step"], r["difficulty"], r.get("seqlen", "")] for r in res],
         ["schedule_step", "difficulty", "seqlen"])


if __name__ == "__main__":
    main()
