#!/usr/bin/python3
"""Independent statement of DeepSpeed's eigenvalue power iteration, on explicit dense matrices.

Read from deepspeedai/DeepSpeed @ edaa7221:
  deepspeed/runtime/eigenvalue.py  Eigenvalue.compute_eigenvalue, normalize, inner_product,
      post_process, nan_to_num
  deepspeed/runtime/engine.py  DeepSpeedEngine.step (when it runs), _eigenvalue_summary_events,
      backward (create_graph=True when eigenvalue is enabled)
  deepspeed/runtime/quantize.py  Quantizer.quantize (factor = 1 + floor(4 * eigenvalue))
  deepspeed/runtime/config.py  get_eigenvalue_config (read only from quantize_training.eigenvalue,
      and asserted disabled: "Eigenvalue based MoQ is temporarily disabled")

The rule, in words
------------------
For each block (one transformer layer; its parameters that have a differentiable gradient are
flattened into one vector, H is the Hessian of the loss w.r.t. that vector):
  v = randn (same shapes; DeepSpeed saves and restores the torch RNG state around the draw)
  v = normalize(v)                       normalize(x) = nan_to_num(x / (||x||_2 + stability))
  i = 0; cur = 1.0; prev = 0.0
  while i < max_iter and |cur| > 0 and |(cur - prev) / cur| >= tol:
      prev = cur
      Hv = nan_to_num(scale * H v)      (autograd of the loss-scaled gradient: scale = loss scale)
      cur = <Hv, v>                      (a Python float)
      v = normalize(Hv) / scale
      i += 1
  eigenvalue = cur * scale
nan_to_num maps NaN, +inf and -inf to 0. The iteration estimates the eigenvalue of largest
magnitude (it keeps its sign); with scale != 1 the first product is not divided by scale while
the later ones are, which DeepSpeed does too. After all blocks:
  post_process: m = max |e_b|;  e_b -> |e_b| / m, or 1.0 when e_b == 0.
MoQ then stretches a parameter's next quantization period by factor = 1 + floor(4 * e_b) (1..5).

CLI
---
  eigenvalue_oracle.py --json --config-file blocks.json
  blocks.json: {"blocks": [{"matrix": [[...]...], "v0": [...]}...],          (v0 optional)
                "max_iter": 100, "tol": 1e-2, "stability": 1e-6, "scale": 1.0,
                "dtype": "float32"|"float64", "seed": 0}
  A single block may be given as top-level "matrix"/"v0". Without v0 the start vector is
  torch.randn(n, generator seeded with seed + block index) in float32, which a C++ test cannot
  reproduce -- give v0 to compare iterations.
  Output: {"blocks": [{"eigenvalue", "iterations", "trace": [cur after each iteration],
           "exact_top": max eigvalsh, "exact_dominant": eigenvalue of largest |.|,
           "exact_all": [...]}...], "post_processed": [...], "moq_factor": [...]}
  eigenvalue_oracle.py --self-test
Needs PyTorch (Debian python3-torch); exits with status 3 when it is missing.
"""
import math
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
from _common import SelfTest, emit, load_config, parse_cli

try:
    import torch
except ImportError as e:  # the C++ test should treat this as a failure, not a skip
    print(f"eigenvalue_oracle.py: {e}; install Debian's python3-torch", file=sys.stderr)
    sys.exit(3)


def nan_to_num(x):
    return torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)


def normalize(v, stability):
    norm = float(torch.sum(v * v)) ** 0.5 + stability
    return nan_to_num(v / norm)


def power_iteration(H, v0, max_iter=100, tol=1e-2, stability=1e-6, scale=1.0):
    v = normalize(v0, stability)
    i = 0
    cur, prev = 1., 0.
    trace = []
    while i < max_iter and abs(cur) > 0 and abs((cur - prev) / cur) >= tol:
        prev = cur
        Hv = nan_to_num(scale * (H @ v))
        cur = float(torch.sum(Hv * v))
        v = normalize(Hv, stability)
        v = v / scale
        i += 1
        trace.append(cur)
    return cur * scale, i, trace


def post_process(values):
    m = abs(max(values, key=abs))
    return [abs(v) / m if v != 0.0 else 1.0 for v in values]


def run(cfg):
    dtype = {"float32": torch.float32, "float64": torch.float64}[cfg.get("dtype", "float32")]
    blocks = cfg.get("blocks")
    if blocks is None:
        blocks = [{"matrix": cfg["matrix"], "v0": cfg.get("v0")}]
    out = []
    for b, blk in enumerate(blocks):
        H = torch.tensor(blk["matrix"], dtype=dtype)
        if H.dim() != 2 or H.shape[0] != H.shape[1]:
            raise ValueError("matrix must be square")
        if not torch.allclose(H, H.T, rtol=1e-5, atol=1e-6):
            raise ValueError("matrix must be symmetric (a Hessian)")
        if blk.get("v0") is not None:
            v0 = torch.tensor(blk["v0"], dtype=dtype)
        else:
            g = torch.Generator().manual_seed(cfg.get("seed", 0) + b)
            v0 = torch.randn(H.shape[0], generator=g, dtype=torch.float32).to(dtype)
        ev, iters, trace = power_iteration(H, v0, cfg.get("max_iter", 100), cfg.get("tol", 1e-2),
                                           cfg.get("stability", 1e-6), cfg.get("scale", 1.0))
        exact = torch.linalg.eigvalsh(H.double()).tolist()
        dominant = max(exact, key=abs)
        out.append({"eigenvalue": ev, "iterations": iters, "trace": trace, "exact_top": max(exact),
                    "exact_dominant": dominant, "exact_all": exact, "v0": v0.tolist()})
    post = post_process([o["eigenvalue"] for o in out])
    return {"blocks": out, "post_processed": post, "moq_factor": [1 + math.floor(p * 4) for p in post]}


def self_test():
    t = SelfTest("eigenvalue_oracle")
    # diag(4, 1), v0 = (1, 1): v = (1,1)/sqrt2 ; Hv = (4,1)/sqrt2, <Hv,v> = 5/2 = 2.5
    # next v = (4,1)/sqrt17 ; <Hv, v> = (16 + 1)/17 ... computed: (64+1)/17 = 65/17 = 3.8235
    H = [[4.0, 0.0], [0.0, 1.0]]
    r = run({"matrix": H, "v0": [1.0, 1.0], "dtype": "float64", "stability": 0.0, "tol": 1e-2})
    tr = r["blocks"][0]["trace"]
    t.close("first Rayleigh quotient 2.5", tr[0], 2.5, rel=1e-15)
    t.close("second Rayleigh quotient 65/17", tr[1], 65 / 17, rel=1e-15)
    # third: v=(16,1)/sqrt257, <Hv,v> = (4*256 + 1)/257 = 1025/257
    t.close("third Rayleigh quotient 1025/257", tr[2], 1025 / 257, rel=1e-15)
    # stops when |(cur-prev)/cur| < 1e-2: iterates (4^(2k+1)+1)/(4^(2k)+1)
    t.eq("iterations for tol 1e-2", r["blocks"][0]["iterations"], 4)
    t.close("exact top", r["blocks"][0]["exact_top"], 4.0, rel=1e-15)
    # Negative dominant eigenvalue keeps its sign; post_process makes it 1.0.
    r = run({"blocks": [{"matrix": [[-3.0, 0.0], [0.0, 1.0]], "v0": [1.0, 0.0]},
                        {"matrix": [[1.5, 0.0], [0.0, 0.5]], "v0": [1.0, 0.0]},
                        {"matrix": [[0.0, 0.0], [0.0, 0.0]], "v0": [1.0, 0.0]}],
             "dtype": "float64", "stability": 0.0})
    t.eq("negative eigenvalue kept", r["blocks"][0]["eigenvalue"], -3.0)
    t.eq("post_process [-3, 1.5, 0] -> [1, 0.5, 1]", r["post_processed"], [1.0, 0.5, 1.0])
    t.eq("zero matrix stops after one iteration", r["blocks"][2]["iterations"], 1)
    t.eq("MoQ factors", r["moq_factor"], [5, 3, 5])
    # Loss scale 4: first product scaled by 4, later ones not; final multiplied by 4.
    r = run({"matrix": [[2.0, 0.0], [0.0, 2.0]], "v0": [1.0, 0.0], "dtype": "float64", "stability": 0.0,
             "scale": 4.0})
    # iter1: Hv = 4*2*(1,0) -> cur 8 ; v = (1,0)/4 ; iter2: Hv = 4*2*(0.25,0) = (2,0), cur = 0.5 ;
    # |0.5-8|/0.5 >= tol -> iter3: same 0.5 -> stop ; eigenvalue 0.5*4 = 2
    t.eq("loss-scale trace", r["blocks"][0]["trace"], [8.0, 0.5, 0.5])
    t.eq("loss-scale result", r["blocks"][0]["eigenvalue"], 2.0)
    # stability shifts the norm: v = (3,4)/(5 + 1)
    t.close("normalize with stability 1", float(normalize(torch.tensor([3.0, 4.0], dtype=torch.float64), 1.0)[0]),
            0.5, rel=1e-15)
    t.finish()


def main():
    args, _ = parse_cli(__doc__, self_test, steps=False)
    cfg = load_config(args)
    res = run(cfg)
    emit(res, args.json, [[i, b["eigenvalue"], b["iterations"], b["exact_top"]] for i, b in enumerate(res["blocks"])],
         ["block", "eigenvalue", "iterations", "exact_top"])


if __name__ == "__main__":
    main()
