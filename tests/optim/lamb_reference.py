#!/usr/bin/env python3
"""An independent statement of DeepSpeed's FusedLamb update (csrc/lamb/fused_lamb_cuda_kernel.cu,
ops/lamb/fused_lamb.py), in float64, for src/optim/lamb_test.cc. Written from the formula,
not from zerotrain's code. Plain Python floats (IEEE double): no numpy needed.

  lamb_reference.py INPUT

INPUT (whitespace-separated numbers):
  lr beta1 beta2 eps weight_decay bias_correction eps_inside_sqrt max_coeff min_coeff grad_scale steps
  T                                  the number of tensors, then per tensor:
  numel decay                        decay 1: weight_decay applies to this tensor
  numel initial parameters
  steps x numel gradients            step 1 first

Per tensor and step t = 1..steps:
  g = grad * grad_scale
  m = b1 m + (1 - b1) g ;  v = b2 v + (1 - b2) g g
  denom = sqrt(v + eps) if eps_inside_sqrt else sqrt(v) + eps
  u = m / denom + decay p
  coeff = clamp(||p|| / ||u||, min_coeff, max_coeff) if both norms are non-zero, else 1
  step_size = lr sqrt(1 - b2^t) / (1 - b1^t) if bias_correction else lr
  p = p - step_size coeff u

Output lines (floats as repr, which round-trips):
  coeff STEP TENSOR COEFF CANCEL     CANCEL = ||uabs|| / ||u|| (1 when u = 0), uabs as below
  p TENSOR values...                 after the last step
  m TENSOR values...
  v TENSOR values...
  scale TENSOR PSCALE MSCALE         the error scales of lamb_test.cc's tolerance argument:
      MSCALE = max_i of mabs, the EMA of |g| (what m's rounding errors are relative to);
      PSCALE = max over steps of max|p| + sum over steps of step_size coeff max_i(uabs_i) (1 + CANCEL),
      uabs = mabs / denom + |decay p|
"""
import math
import sys


def lamb(o, decay, p, grads):
    lr, b1, b2, eps, wd, bc, inside, max_c, min_c, gscale = o
    d = wd if decay else 0.0
    n = len(p)
    m = [0.0] * n
    v = [0.0] * n
    mabs = [0.0] * n
    coeffs = []
    pmax = max([abs(x) for x in p] + [0.0])
    moved = 0.0
    for t, grad in enumerate(grads, start=1):
        g = [x * gscale for x in grad]
        m = [b1 * mi + (1.0 - b1) * gi for mi, gi in zip(m, g)]
        v = [b2 * vi + (1.0 - b2) * gi * gi for vi, gi in zip(v, g)]
        mabs = [b1 * ai + (1.0 - b1) * abs(gi) for ai, gi in zip(mabs, g)]
        denom = [math.sqrt(vi + eps) if inside else math.sqrt(vi) + eps for vi in v]
        u = [mi / di + d * pi for mi, di, pi in zip(m, denom, p)]
        uabs = [ai / di + abs(d * pi) for ai, di, pi in zip(mabs, denom, p)]
        w_norm = math.sqrt(sum(x * x for x in p))
        u_norm = math.sqrt(sum(x * x for x in u))
        uabs_norm = math.sqrt(sum(x * x for x in uabs))
        coeff = 1.0
        if w_norm != 0.0 and u_norm != 0.0:
            coeff = min(max(w_norm / u_norm, min_c), max_c)
        cancel = uabs_norm / u_norm if u_norm != 0.0 else 1.0
        coeffs.append((coeff, cancel))
        step = lr * math.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t) if bc else lr
        p = [pi - step * coeff * ui for pi, ui in zip(p, u)]
        pmax = max([pmax] + [abs(x) for x in p])
        moved += step * coeff * max(uabs + [0.0]) * (1.0 + cancel)
    return p, m, v, coeffs, pmax + moved, max(mabs + [0.0])


def main(argv):
    with open(argv[1]) as f:
        words = f.read().split()
    pos = 0

    def take(k):
        nonlocal pos
        out = [float(w) for w in words[pos:pos + k]]
        pos += k
        return out

    head = take(11)
    lr, b1, b2, eps, wd, bc, inside, max_c, min_c, gscale = head[:10]
    o = (lr, b1, b2, eps, wd, bc != 0.0, inside != 0.0, max_c, min_c, gscale)
    steps = int(head[10])
    ntensors = int(take(1)[0])
    results = []
    for _ in range(ntensors):
        numel, decay = take(2)
        numel = int(numel)
        p = take(numel)
        grads = [take(numel) for _ in range(steps)]
        results.append(lamb(o, decay != 0.0, p, grads))
    for s in range(steps):
        for i, r in enumerate(results):
            print("coeff", s + 1, i, repr(r[3][s][0]), repr(r[3][s][1]))
    for i, (p, m, v, _, pscale, mscale) in enumerate(results):
        print("p", i, " ".join(repr(x) for x in p))
        print("m", i, " ".join(repr(x) for x in m))
        print("v", i, " ".join(repr(x) for x in v))
        print("scale", i, repr(pscale), repr(mscale))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
