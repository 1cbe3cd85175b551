#!/usr/bin/python3
"""Independent statement of DeepSpeed's random-LTD kept-token (reserved length) schedule.

Read from DeepSpeed (deepspeedai/DeepSpeed @ edaa7221):
  deepspeed/runtime/data_pipeline/data_routing/scheduler.py  BaseScheduler.__fixed_root_get_value,
      RandomLTDScheduler.update_seq / state_dict
  deepspeed/runtime/engine.py  DeepSpeedEngine._forward_prologue (update_seq(global_steps) on every
      training forward), __init__ (global_batch_size / micro_batch_size overwritten from the
      engine's train_batch_size / train_micro_batch_size_per_gpu)
  deepspeed/runtime/data_pipeline/data_routing/basic_layer.py  RandomLayerTokenDrop.forward
      (drops only when training and reserved_length < the hidden state's sequence length)
  Megatron-DeepSpeed megatron/training.py train() (actual_seq_length bookkeeping)

The rule, in words
------------------
With g = global_steps (0-based count of optimizer steps already taken; the same for every
micro-batch of one optimizer step):
    F = floor( (g / require_steps) ** 1.0 * (max_value - min_value) + min_value )
    r = min( F - (F mod seq_per_step), max_value )
in double precision, in that order. Only schedule_type "fixed_linear" exists. The scheduler is
stateful: current starts at min_value (not rounded) and is replaced by r only while
current < max_value, so once it reaches max_value it is frozen. Past require_steps F keeps
growing and only min() holds r at max_value. If min_value is not a multiple of seq_per_step the
value at g = 0 is min_value rounded down (below min_value).
A wrapped layer keeps r tokens per sample when r < its input's sequence length, else runs on all.
Token bookkeeping: the first call for each new g adds
    global_batch_size * (r * random_ltd_layer_num + max_value * (total_layer_num - random_ltd_layer_num))
to consumed_layer_tokens (state key current_steps remembers g; it starts at -1).
Megatron's per-step effective sequence length, when r < S:
    (S * (num_layers - random_ltd_layer_num) + r * random_ltd_layer_num) // num_layers

CLI
---
  random_ltd_oracle.py --json --config '{"random_ltd_schedule": {"min_value":128,
      "max_value":2048,"schedule_type":"fixed_linear","schedule_config":{"require_steps":200000,
      "seq_per_step":16}}, "total_layer_num":24, "random_ltd_layer_num":22,
      "global_batch_size":256, "seq_length":2048}' --steps 0:10
  (the config may be the random_ltd block, a whole DeepSpeed config, or just the schedule;
   global_batch_size is the engine's train_batch_size; seq_length is optional)
  Output: {"results": [{"global_steps", "reserved_length", "drops_tokens",
           "consumed_layer_tokens", "actual_seq_length"}...], "state_dict": {...}}
  random_ltd_oracle.py --self-test
"""
import argparse
import sys
import math

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
from _common import SelfTest, add_common_args, emit, load_config, parse_steps


def find_block(cfg):
    if "random_ltd_schedule" in cfg:
        return cfg
    if "min_value" in cfg:
        return {"random_ltd_schedule": cfg}
    return cfg["data_efficiency"]["data_routing"]["random_ltd"]


class RandomLTDSchedule:

    def __init__(self, block):
        s = block["random_ltd_schedule"]
        if s.get("schedule_type", "fixed_linear") != "fixed_linear":
            raise ValueError("DeepSpeed supports only fixed_linear")
        self.min = s["min_value"]
        self.max = s["max_value"]
        self.req = s["schedule_config"]["require_steps"]
        self.sps = s["schedule_config"]["seq_per_step"]
        self.current = self.min
        self.current_steps = -1
        self.consumed = 0
        self.total_layers = block.get("total_layer_num")
        self.ltd_layers = block.get("random_ltd_layer_num")
        self.gbs = block.get("global_batch_size")

    def value(self, g):
        f = math.floor((float(g) / self.req) ** (1.0 / 1) * (self.max - self.min) + self.min)
        f -= f % self.sps
        return min(f, self.max)

    def update(self, g):
        if self.current < self.max:
            self.current = self.value(g)
        if g != self.current_steps:
            if None not in (self.total_layers, self.ltd_layers, self.gbs):
                self.consumed += self.gbs * (self.current * self.ltd_layers +
                                             self.max * (self.total_layers - self.ltd_layers))
            self.current_steps = g
        return self.current

    def state_dict(self):
        return {"consumed_layer_tokens": self.consumed, "current_steps": self.current_steps,
                "current_value": self.current, "min_value": self.min, "max_value": self.max}


def run(block, steps, seq_length=None):
    sch = RandomLTDSchedule(block)
    out = []
    for g in steps:
        r = sch.update(g)
        row = {"global_steps": g, "reserved_length": r, "consumed_layer_tokens": sch.consumed}
        if seq_length is not None:
            row["drops_tokens"] = r < seq_length
            if r < seq_length and sch.total_layers and sch.ltd_layers is not None:
                L, k = sch.total_layers, sch.ltd_layers
                row["actual_seq_length"] = (seq_length * (L - k) + r * k) // L
            else:
                row["actual_seq_length"] = seq_length
        out.append(row)
    return out, sch.state_dict()


def self_test():
    t = SelfTest("random_ltd_oracle")
    blk = {"random_ltd_schedule": {"min_value": 128, "max_value": 2048, "schedule_type": "fixed_linear",
                                   "schedule_config": {"require_steps": 200000, "seq_per_step": 16}}}
    sch = RandomLTDSchedule(blk)
    # g=1: 1/200000*1920 + 128 = 128.0096 -> 128
    t.eq("g=0", sch.value(0), 128)
    t.eq("g=1", sch.value(1), 128)
    # 1666*1920/200000 = 15.9936 -> 143 -> 128 ; 1667 -> 16.0032 -> 144 -> 144
    t.eq("g=1666", sch.value(1666), 128)
    t.eq("g=1667", sch.value(1667), 144)
    t.eq("g=100000 (half way)", sch.value(100000), 1088)
    t.eq("g=200000", sch.value(200000), 2048)
    t.eq("g=400000 (past the end)", sch.value(400000), 2048)
    odd = {"random_ltd_schedule": {"min_value": 100, "max_value": 200, "schedule_type": "fixed_linear",
                                   "schedule_config": {"require_steps": 10, "seq_per_step": 16}}}
    s2 = RandomLTDSchedule(odd)
    t.eq("min 100 not multiple of 16: g=0 rounds below min", s2.value(0), 96)
    # g=10: 200 -> 192; g=11: 1.1*100+100 = 210 -> 208 -> min 200
    t.eq("max 200 not multiple of 16: g=10, g=11", [s2.value(10), s2.value(11)], [192, 200])
    # Bookkeeping: 24 layers, 22 dropped, batch 2; g=0 (r=128), g=0 again (no add), g=1 (r=128).
    blk2 = dict(blk, total_layer_num=24, random_ltd_layer_num=22, global_batch_size=2)
    rows, sd = run(blk2, [0, 0, 1], seq_length=2048)
    per_step = 2 * (128 * 22 + 2048 * 2)
    t.eq("consumed_layer_tokens after g=0,0,1", rows[-1]["consumed_layer_tokens"], 2 * per_step)
    t.eq("state current_steps", sd["current_steps"], 1)
    t.eq("Megatron actual_seq_length", rows[0]["actual_seq_length"], (2048 * 2 + 128 * 22) // 24)
    t.finish()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(p)
    p.add_argument("--seq-length", type=int, help="sequence length entering the wrapped layers")
    args = p.parse_args()
    if args.self_test:
        self_test()
    cfg = load_config(args)
    block = find_block(cfg)
    seq = args.seq_length if args.seq_length is not None else cfg.get("seq_length")
    steps = parse_steps(args.steps) if args.steps else list(range(10))
    rows, sd = run(block, steps, seq)
    emit({"results": rows, "state_dict": sd}, args.json,
         [[r["global_steps"], r["reserved_length"], r["consumed_layer_tokens"]] for r in rows],
         ["global_steps", "reserved_length", "consumed_layer_tokens"])


if __name__ == "__main__":
    main()
