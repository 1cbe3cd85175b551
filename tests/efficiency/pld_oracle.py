#!/usr/bin/python3
"""Independent statement of DeepSpeed's progressive layer drop (PLD) schedule.

Read from:
  deepspeedai/DeepSpeed @ edaa7221
    deepspeed/runtime/progressive_layer_drop.py  ProgressiveLayerDrop.update_state / get_state
    deepspeed/runtime/engine.py  DeepSpeedEngine.step (update_state(global_steps) at every
        gradient-accumulation boundary, before _take_model_step increments global_steps) and
        _forward_prologue (kwargs progressive_layer_drop=True, pld_theta=current_theta on every
        training forward)
    tests/unit/runtime/test_pld.py (after the i-th step() call, get_pld_theta() == theta(i))
  microsoft/DeepSpeedExamples @ 83757d9c
    training/bing_bert/nvidia/modelingpreln_layerdrop.py  BertEncoder.forward, BertLayer.forward

The rule, in words
------------------
Global keep probability ("theta") after the boundary of optimizer step t (t = global_steps at
that boundary, 0-based):
    theta(t) = (1 - theta_bar) * exp(-gamma * t) + theta_bar
It starts at 1.0 before any step, so the forwards of optimizer step k use
    theta_used(k) = 1.0 if k == 0 else theta(k - 1).
Per layer (DeepSpeedExamples' pre-LN BERT, L layers, i = 0..L-1):
    step = (1 - theta_used) / L ;  p_0 = 1.0 ;  p_{i+1} = p_i - step   (repeated subtraction)
    layer i runs with probability p_i (one Bernoulli draw per layer per forward, the same for
    the whole batch: numpy.random.choice([1, 0], p=[p_i, 1 - p_i]));
    a skipped layer is the identity; a kept layer scales both sub-layer outputs (attention and
    feed-forward, before each residual add) by 1 / p_{i+1} -- the NEXT layer's probability,
    because the example decrements p before passing it as keep_prob.
So layer 0 always runs (scaled by 1 / (1 - step)) and the last layer is scaled by 1 / theta_used.
DeepSpeed computes exp with numpy (float64); numpy's exp differs from libm's exp by 1 ulp for
about a quarter of arguments, so compare theta with a ~1e-15 relative tolerance (--exp numpy
reproduces DeepSpeed's bits when numpy is installed).

CLI
---
  pld_oracle.py --json --config '{"theta":0.5,"gamma":0.001,"num_layers":12}' --steps 0:5
  Output: {"results": [{"global_steps": k, "theta_used": ..., "theta_after_step": theta(k),
           "keep_prob": [p_0..p_{L-1}], "scale": [1/p_1..1/p_L],
           "keep_prob_closed_form": [1 - i*(1-theta_used)/L ...]}...]}
  The config may also be a whole DeepSpeed config with a "progressive_layer_drop" block
  (num_layers then comes from --num-layers).
  pld_oracle.py --self-test
"""
import argparse
import sys
import math

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
from _common import SelfTest, add_common_args, emit, load_config, parse_steps


def make_exp(kind):
    if kind == "numpy":
        import numpy as np  # only when asked for
        return lambda x: float(np.exp(x))
    return math.exp


def theta_at(t, theta_bar, gamma, exp=math.exp):
    return (1. - theta_bar) * exp(-gamma * t) + theta_bar


def layer_probs(theta_used, num_layers):
    drop_prob = 1 - theta_used
    step = drop_prob / num_layers
    p = 1.0
    keep, scale = [], []
    for _ in range(num_layers):
        keep.append(p)
        p = p - step
        scale.append(1 / p if p != 0 else float("inf"))
    closed = [1 - i * drop_prob / num_layers for i in range(num_layers)]
    return keep, scale, closed


def run(theta_bar, gamma, num_layers, steps, exp):
    out = []
    for k in steps:
        used = 1.0 if k == 0 else theta_at(k - 1, theta_bar, gamma, exp)
        row = {"global_steps": k, "theta_used": used, "theta_after_step": theta_at(k, theta_bar, gamma, exp)}
        if num_layers:
            keep, scale, closed = layer_probs(used, num_layers)
            row.update(keep_prob=keep, scale=scale, keep_prob_closed_form=closed)
        out.append(row)
    return out


def self_test():
    t = SelfTest("pld_oracle")
    t.eq("theta(0) = 1 for any theta_bar", theta_at(0, 0.5, 0.001), 1.0)
    t.close("theta(1000), theta_bar 0.5, gamma 0.001 = 0.5/e + 0.5",
            theta_at(1000, 0.5, 0.001), 0.5 * math.exp(-1) + 0.5, rel=1e-15)
    t.close("theta(1000) literal", theta_at(1000, 0.5, 0.001), 0.6839397205857212, rel=1e-15)
    t.eq("theta_bar 1.0 keeps everything", theta_at(12345, 1.0, 0.001), 1.0)
    rows = run(0.5, 0.001, 12, [0, 1, 2], math.exp)
    t.eq("forwards of step 0 use 1.0", rows[0]["theta_used"], 1.0)
    t.eq("forwards of step 1 use theta(0) = 1.0", rows[1]["theta_used"], 1.0)
    t.close("forwards of step 2 use theta(1)", rows[2]["theta_used"], 0.5 * math.exp(-0.001) + 0.5, rel=1e-15)
    keep, scale, closed = layer_probs(0.5, 12)
    t.eq("layer 0 always kept", keep[0], 1.0)
    t.close("layer 1 keep prob 1 - 0.5/12", keep[1], 1 - 0.5 / 12, rel=1e-15)
    t.close("layer 11 keep prob 1 - 11*0.5/12", keep[11], 1 - 11 * 0.5 / 12, rel=1e-14)
    t.close("layer 0 scale 1/(1 - 0.5/12) = 24/23", scale[0], 24 / 23, rel=1e-15)
    t.close("last layer scale 1/theta = 2", scale[11], 2.0, rel=1e-14)
    keep, scale, _ = layer_probs(1.0, 4)
    t.eq("theta 1.0: all keep 1, scale 1", (keep, scale), ([1.0] * 4, [1.0] * 4))
    t.finish()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(p)
    p.add_argument("--num-layers", type=int, help="encoder layers (overrides config num_layers)")
    p.add_argument("--exp", choices=["math", "numpy"], default="math")
    args = p.parse_args()
    if args.self_test:
        self_test()
    cfg = load_config(args)
    block = cfg.get("progressive_layer_drop", cfg)
    layers = args.num_layers if args.num_layers is not None else cfg.get("num_layers")
    steps = parse_steps(args.steps) if args.steps else list(range(10))
    rows = run(block["theta"], block["gamma"], layers, steps, make_exp(args.exp))
    emit({"theta": block["theta"], "gamma": block["gamma"], "num_layers": layers, "results": rows}, args.json,
         [[r["global_steps"], repr(r["theta_used"]), repr(r["theta_after_step"])] for r in rows],
         ["global_steps", "theta_used", "theta_after_step"])


if __name__ == "__main__":
    main()
