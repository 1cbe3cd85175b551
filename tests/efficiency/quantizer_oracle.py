#!/usr/bin/python3
"""Independent statement of DeepSpeed's weight-quantization arithmetic and MoQ bit schedule.

Read from deepspeedai/DeepSpeed @ edaa7221 (current) and @ 6b9df564 (v0.6.x, before the
compression composer of July 2022, for the legacy "quantize_training" block):
  deepspeed/runtime/quantize.py  Quantizer.quantize, compute_quantization, quantize_highbit,
      update_fp16_ratio                                    (MoQ: quantize after the optimizer step)
  deepspeed/compression/utils.py  SymQuantizer.forward, AsymQuantizer.forward
                                                           (quantize_weight_in_forward = true)
  deepspeed/compression/scheduler.py  compression_scheduler.step / check_weight_quantization
  deepspeed/runtime/engine.py  _forward_prologue (global_steps == 0 quantize), _take_model_step
  legacy: deepspeed/runtime/quantize.py @ 6b9df564  Quantizer.compute_quantization

Arithmetic (nearest rounding; round() is round-half-to-even, as torch.round):
  The tensor is flattened row-major and cut into `groups` equal contiguous groups
  (reshape(groups, -1): numel must divide). Per group, with q_range = 2**bits:
  symmetric:  scale = 2 * max(|min|, |max|) / q_range
              q = clamp(round(x / scale), -q_range/2, q_range/2 - 1);  out = q * scale
  asymmetric: scale = (max - min) / q_range              (divides by 2**bits, not 2**bits - 1)
              zp = round(min / scale) * scale
              q = clamp(round((x - zp) / scale), 0, q_range - 1);  out = q * scale + zp
  Every operation is rounded to the tensor's dtype: float32 for quantize-in-forward on fp32
  weights, float16 for MoQ (it quantizes the fp16 model copy in place; the fp32 master weights
  are never quantized). An all-zero group gives scale 0 and NaN outputs (0/0), as in DeepSpeed.
  bits 2 (ternary) and 1 (binary) use other formulas (stated in the design doc, not here).
  The legacy variant (v0.4-v0.6 "quantize_training"): symmetric multiplies by
  s = q_range / (2*max(max, |min|)) and divides back (round(x*s) clamped, / s); asymmetric uses
  zero point = min exactly: round((x - min)/scale) clamped * scale + min; groups are
  torch.split(flat, numel // groups) (a short last group when numel does not divide).
  fp16_mixed_quantize: out = ratio * x + (1 - ratio) * q(x).

Bit schedule (MoQ path, compression_training.weight_quantization, quantize_weight_in_forward
false): a counter qsteps counts the quantize calls that were not skipped. Calls happen
  (a) on every forward while global_steps == 0, once weight quantization is enabled
      (enabled as soon as the compression scheduler's training_steps >= schedule_offset;
      training_steps counts non-overflow optimizer steps, checked at step 0 with 0);
  (b) after every optimizer step while enabled; an overflowed (skipped) step makes no call.
Each call: qsteps += 1; ratio -= change_ratio if ratio > 0 else ratio = 0 (fp16_mixed only);
then per parameter, if bits != target_bits and qsteps >= period: ratio = 1, period =
(period << 1) * factor (factor = 1 + floor(4 * eigenvalue), 1 without eigenvalue), bits -= 1.
At most one bit is dropped per call. Then the weight is quantized at `bits`.
Legacy MoQ: only (b); qsteps += 6 per call; while schedule_offset > 0 a call leaves weights
alone unless qsteps >= schedule_offset, in which case offset and qsteps become 0 and that call
quantizes; the switch test is the same (period doubles, all parameters share bits).

CLI
---
  quantizer_oracle.py --json --config '{"mode":"quantize","values":[...],"bits":8,"groups":1,
      "type":"symmetric","dtype":"float32","variant":"compression","mixed_ratio":null}'
  quantizer_oracle.py --json --config '{"mode":"schedule","start_bits":12,"target_bits":8,
      "quantization_period":10,"schedule_offset":0,"gradient_accumulation_steps":1,
      "steps":40,"overflow_steps":[],"fp16_mixed_quantize":false,"quantize_change_ratio":0.001,
      "variant":"compression"}'
  Output (quantize): {"output": [...], "groups": [{"min","max","scale","zero_point"}...]}
  Output (schedule): {"calls": [{"phase":"forward"|"step","global_steps","qsteps","bits",
      "period","ratio","switched"}...], "bits_after_step": [bits in force after step k or null]}
  quantizer_oracle.py --self-test
"""
import sys
import math
import struct

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
from _common import SelfTest, emit, load_config, parse_cli


def rounder(dtype):
    fmt = {"float32": "<f", "float16": "<e", "float64": None}[dtype]
    if fmt is None:
        return lambda x: x

    def r(x):
        try:
            return struct.unpack(fmt, struct.pack(fmt, x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    return r


def rne(x):
    """torch.round: round half to even; NaN and inf pass through."""
    if math.isnan(x) or math.isinf(x):
        return x
    return float(round(x))


def clamp(x, lo, hi):
    if math.isnan(x):
        return x
    return min(max(x, lo), hi)


def split_groups(flat, groups, variant):
    n = len(flat)
    if variant == "legacy":
        size = n // groups
        if size == 0:
            raise ValueError("legacy split: numel // groups == 0")
        return [flat[i:i + size] for i in range(0, n, size)]
    if n % groups:
        raise ValueError(f"reshape({groups}, -1) needs numel ({n}) divisible by groups")
    size = n // groups
    return [flat[i * size:(i + 1) * size] for i in range(groups)]


def quantize(values, bits, groups=1, qtype="symmetric", dtype="float32", variant="compression",
             mixed_ratio=None):
    R = rounder(dtype)
    xs = [R(v) for v in values]
    q_range = 2 ** bits
    out, info = [], []
    for g in split_groups(xs, groups, variant):
        gmin, gmax = min(g), max(g)
        if any(math.isnan(v) for v in g):
            gmin = gmax = math.nan
        if variant == "compression":
            if qtype == "symmetric":
                scale = R(R(2 * max(abs(gmin), abs(gmax))) / q_range)
                zp = 0.0
                res = [R(clamp(rne(R(x / scale) if scale != 0 else _div0(x)), -(q_range >> 1),
                               (q_range >> 1) - 1) * scale) for x in g]
            else:
                scale = R(R(gmax - gmin) / q_range)
                zp = R(rne(R(gmin / scale) if scale != 0 else _div0(gmin)) * scale)
                res = []
                for x in g:
                    t = R(x - zp)
                    t = R(t / scale) if scale != 0 else _div0(t)
                    res.append(R(R(clamp(rne(t), 0, q_range - 1) * scale) + zp))
        elif variant == "legacy":
            if qtype == "symmetric":
                denom = R(2 * max(gmax, abs(gmin)))
                s = R(q_range / denom) if denom != 0 else math.inf
                zp = 0.0
                scale = s
                res = [R(clamp(rne(R(x * s)), -(q_range >> 1), (q_range >> 1) - 1) / s) for x in g]
            else:
                scale = R(R(gmax - gmin) / q_range)
                zp = gmin
                res = []
                for x in g:
                    t = R(x - gmin)
                    t = R(t / scale) if scale != 0 else _div0(t)
                    res.append(R(R(clamp(rne(t), 0, q_range - 1) * scale) + gmin))
        else:
            raise ValueError("variant must be compression or legacy")
        if mixed_ratio is not None:
            r = R(mixed_ratio)
            one_minus = R(1 - mixed_ratio)
            res = [R(R(r * x) + R(one_minus * q)) for x, q in zip(g, res)]
        out.extend(res)
        info.append({"min": gmin, "max": gmax, "scale": scale, "zero_point": zp,
                     "scale_is_multiplier": variant == "legacy" and qtype == "symmetric"})
    return out, info


def _div0(x):
    """IEEE division by +0.0 (torch semantics): nan for 0/0, signed inf otherwise."""
    if x == 0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x)


def schedule(cfg):
    variant = cfg.get("variant", "compression")
    start = cfg["start_bits"]
    target = cfg["target_bits"]
    period = cfg.get("quantization_period", cfg.get("quantize_period"))
    offset = cfg.get("schedule_offset", 0)
    gas = cfg.get("gradient_accumulation_steps", 1)
    n = cfg["steps"]
    overflow = set(cfg.get("overflow_steps", []))
    mixed = cfg.get("fp16_mixed_quantize", False)
    change = cfg.get("quantize_change_ratio", 0.001)
    factor = cfg.get("eigen_factor", 1)
    st = {"q": 0, "bits": start, "period": period, "ratio": 1.0}
    calls = []
    bits_after = []

    def ratio_update():
        if mixed:
            if st["ratio"] > 0:
                st["ratio"] -= change
            else:
                st["ratio"] = 0.000

    def switch_test():
        switched = False
        if st["bits"] != target and st["q"] >= st["period"]:
            st["ratio"] = 1.0
            st["period"] = (st["period"] << 1) * factor
            st["bits"] -= 1
            switched = True
        if st["bits"] < target:
            raise ValueError("bits below target (DeepSpeed asserts)")
        return switched

    if variant == "compression":
        training_steps = 0
        enabled = False
        for k in range(n):
            if k == 0:
                for m in range(gas):
                    enabled = enabled or training_steps >= offset
                    if enabled:
                        st["q"] += 1
                        ratio_update()
                        sw = switch_test()
                        calls.append({"phase": "forward", "global_steps": 0, "micro_step": m, "qsteps": st["q"],
                                      "bits": st["bits"], "period": st["period"], "ratio": st["ratio"],
                                      "switched": sw})
            ov = k in overflow
            if enabled and not ov:
                st["q"] += 1
                ratio_update()
                sw = switch_test()
                calls.append({"phase": "step", "global_steps": k, "qsteps": st["q"], "bits": st["bits"],
                              "period": st["period"], "ratio": st["ratio"], "switched": sw})
            if not ov:
                training_steps += 1
                enabled = enabled or training_steps >= offset
            bits_after.append(st["bits"] if any(c["phase"] == "step" or c["phase"] == "forward" for c in calls)
                              else None)
    elif variant == "legacy":
        q_offset = offset
        quantized_once = False
        for k in range(n):
            if k in overflow:
                bits_after.append(st["bits"] if quantized_once else None)
                continue
            st["q"] += 6 * cfg.get("layer_num", 0) if cfg.get("layer_num", 0) else 6
            ratio_update()
            if q_offset > 0:
                if st["q"] >= q_offset:
                    q_offset = 0
                    st["q"] = 0
                else:
                    calls.append({"phase": "step", "global_steps": k, "qsteps": st["q"], "bits": None,
                                  "period": st["period"], "ratio": st["ratio"], "switched": False})
                    bits_after.append(None)
                    continue
            sw = switch_test()
            quantized_once = True
            calls.append({"phase": "step", "global_steps": k, "qsteps": st["q"], "bits": st["bits"],
                          "period": st["period"], "ratio": st["ratio"], "switched": sw})
            bits_after.append(st["bits"])
    else:
        raise ValueError("variant must be compression or legacy")
    return {"calls": calls, "bits_after_step": bits_after}


def self_test():
    t = SelfTest("quantizer_oracle")
    # Symmetric 8-bit, one group: max|x| = 1 -> scale = 2/256 = 1/128.
    out, info = quantize([1.0, -1.0, 0.5, 0.00390625, -0.01171875], 8)
    t.eq("sym8 scale", info[0]["scale"], 1 / 128)
    # 1.0/scale = 128 -> clamp to 127 -> 127/128; -1 -> -128 -> -1; 0.5 -> 64;
    # 0.00390625*128 = 0.5 -> round half even -> 0; -0.01171875*128 = -1.5 -> -2
    t.eq("sym8 values (clamp at +127, half-to-even)", out, [127 / 128, -1.0, 0.5, 0.0, -2 / 128])
    # Asymmetric 2 groups, 4 bits.
    out, info = quantize([0.0, 1.0, 2.0, 3.0, -1.0, -1.0, 1.0, 3.0], 4, groups=2, qtype="asymmetric")
    # group 1: min 0 max 3 -> scale 3/16 = 0.1875, zp = round(0/0.1875)*0.1875 = 0
    t.eq("asym4 group1 scale", info[0]["scale"], 0.1875)
    # 1/0.1875 = 5.333 -> 5 -> 0.9375 ; 2/0.1875 = 10.667 -> 11 -> 2.0625 ; 3 -> 16 -> clamp 15 -> 2.8125
    t.eq("asym4 group1 values", out[:4], [0.0, 0.9375, 2.0625, 2.8125])
    # group 2: min -1 max 3 -> scale 0.25 ; zp = round(-4)*0.25 = -1 ; x=-1 -> 0 -> -1 ; 1 -> 8 -> 1 ; 3 -> 16 -> 15 -> 2.75
    t.eq("asym4 group2 values", out[4:], [-1.0, -1.0, 1.0, 2.75])
    # asym zero point rounding: min 0.1 max 1.1, 2 bits: scale 0.25, zp = round(0.4)*0.25 = 0
    out, info = quantize([0.1, 1.1], 2, qtype="asymmetric", dtype="float64")
    t.eq("asym2 zero point rounds to the grid", info[0]["zero_point"], 0.0)
    # 0.1/0.25 = 0.4 -> 0 -> 0.0 ; 1.1/0.25 = 4.4 -> 4 -> clamp 3 -> 0.75
    t.eq("asym2 values", out, [0.0, 0.75])
    # float32 rounding: 0.1 is not representable; scale = 2*0.1f/256.
    out, info = quantize([0.1, 0.05], 8)
    f = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    t.eq("sym8 float32 scale", info[0]["scale"], struct.unpack("<f", struct.pack("<f", 2 * f / 256))[0])
    # float16 MoQ arithmetic
    out, _ = quantize([0.3, -0.7, 0.2, 0.1], 4, dtype="float16")
    # half(0.7) = 0.7001953125 ; scale = 2*0.7002/16 = 0.08752441... -> half 0.08752
    sc = struct.unpack("<e", struct.pack("<e", 2 * 0.7001953125 / 16))[0]
    want = [struct.unpack("<e", struct.pack("<e", max(min(rne(struct.unpack("<e", struct.pack("<e", struct.unpack("<e", struct.pack("<e", v))[0] / sc))[0]), 7), -8) * sc))[0]
            for v in (0.3, -0.7, 0.2, 0.1)]
    t.eq("sym4 float16 end to end", out, want)
    t.eq("all-zero group gives NaN", [math.isnan(v) for v in quantize([0.0, 0.0], 8)[0]], [True, True])
    try:
        quantize([1.0, 2.0, 3.0], 8, groups=2)
        t.eq("reshape needs divisibility", "no error", "ValueError")
    except ValueError:
        t.eq("reshape needs divisibility", "ValueError", "ValueError")
    # Legacy split: 10 values, 3 groups -> chunks 3,3,3,1
    _, info = quantize([float(i) for i in range(10)], 8, groups=3, variant="legacy")
    t.eq("legacy split makes 4 chunks", len(info), 4)
    # Schedule: start 12 target 8 period 10 offset 0, gas 1.
    s = schedule({"start_bits": 12, "target_bits": 8, "quantization_period": 10, "schedule_offset": 0,
                  "steps": 200})
    first = [c for c in s["calls"] if c["switched"]]
    # calls: forward (q=1), step0 (q=2), step k (q=k+2). Switch at q>=10 (step 8), then 20 (18), 40 (38), 80 (78).
    t.eq("switch calls (global_steps)", [c["global_steps"] for c in first], [8, 18, 38, 78])
    t.eq("bits after step 7, 8, 78, 199", [s["bits_after_step"][i] for i in (7, 8, 78, 199)], [12, 11, 8, 8])
    # Offset 5: enabled after the 5th successful step (training_steps 5); first call after step 5.
    s = schedule({"start_bits": 8, "target_bits": 4, "quantization_period": 2, "schedule_offset": 5,
                  "steps": 12, "overflow_steps": [2]})
    t.eq("offset 5 with an overflow at step 2: first call", s["calls"][0]["global_steps"], 6)
    t.eq("bits after each step", s["bits_after_step"], [None] * 6 + [8, 7, 7, 6, 6, 6])
    # Legacy: period 12, offset 12 -> offset reached at call 2 (q=12): reset q=0, quantize at start bits.
    s = schedule({"variant": "legacy", "start_bits": 16, "target_bits": 8, "quantize_period": 12,
                  "schedule_offset": 12, "steps": 6})
    t.eq("legacy bits after each step", s["bits_after_step"], [None, 16, 16, 15, 15, 14])
    # (q after reset: step1 0, step2 6, step3 12>=12 -> 15 (period 24), step4 18, step5 24>=24 -> 14)
    # Mixed fp16 ratio: change 0.25 -> 0.75, 0.5, 0.25, 0.0 (then 0.0 stays; -> 1 at a switch).
    s = schedule({"start_bits": 8, "target_bits": 7, "quantization_period": 100, "schedule_offset": 0,
                  "steps": 5, "fp16_mixed_quantize": True, "quantize_change_ratio": 0.25})
    t.eq("mixed ratio per call", [c["ratio"] for c in s["calls"]], [0.75, 0.5, 0.25, 0.0, 0.0, 0.0])
    t.finish()


def main():
    args, _ = parse_cli(__doc__, self_test, steps=False)
    cfg = load_config(args)
    mode = cfg.get("mode", "quantize")
    if mode == "quantize":
        out, info = quantize(cfg["values"], cfg["bits"], cfg.get("groups", 1), cfg.get("type", "symmetric"),
                             cfg.get("dtype", "float32"), cfg.get("variant", "compression"), cfg.get("mixed_ratio"))
        emit({"output": out, "groups": info}, args.json, [[v] for v in out], ["output"])
    elif mode == "schedule":
        res = schedule(cfg)
        emit(res, args.json, [[c["phase"], c["global_steps"], c["qsteps"], c["bits"], c["period"]] for c in res["calls"]],
             ["phase", "global_steps", "qsteps", "bits", "period"])
    else:
        raise SystemExit("mode must be quantize or schedule")


if __name__ == "__main__":
    main()
