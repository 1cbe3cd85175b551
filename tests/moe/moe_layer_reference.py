#!/usr/bin/python3
"""PyTorch statement of a whole MoE layer for kernels/cpu/moe_dispatch_test.cc (test-only).

Usage: moe_layer_reference.py CASES.json OUT.json
DeepSpeed's MOELayer as its documentation states it (deepspeed/moe/sharded_moe.py): router
logits x Wg^T, the gate (moe_gate_reference.route, the same rules and draws), dispatch
one-hot over (expert, capacity) slots, each expert's MLP on its whole (capacity, C) buffer,
combine weighted by the gate, plus l_aux scaled by the case's coefficient in the loss.
Experts are GPT-2 MLPs (tanh GELU, biases) or Llama/Mixtral SwiGLU MLPs (w1, w3, w2, no
biases). The loss is sum(y * R) + coef * l_aux; the output holds y, l_aux and every gradient.
CASE: the gate's keys (see moe_gate_reference.py) without logits/dweight/dl_aux, plus x (N, C),
router (E, C), experts: list of {"w1", "b1", "w3", "w2", "b2"} (absent where unused), swiglu,
R (N, C), coef.
Exit status 3 when torch is missing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"moe_layer_reference.py: {e}; install Debian's python3-torch", file=sys.stderr)
    sys.exit(3)
import moe_gate_reference as gate  # noqa: E402


def t(v):
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


def expert_mlp(p, h, swiglu):
    if swiglu:
        return (F.silu(h @ p["w1"].T) * (h @ p["w3"].T)) @ p["w2"].T
    return F.gelu(h @ p["w1"].T + p["b1"], approximate="tanh") @ p["w2"].T + p["b2"]


def layer(c):
    x, wg, R = t(c["x"]), t(c["router"]), torch.tensor(c["R"], dtype=torch.float64)
    experts = [{name: t(v) for name, v in e.items()} for e in c["experts"]]
    N, E = x.shape[0], wg.shape[0]
    r = gate.route(c, x @ wg.T)
    cap, k = r["capacity"], c["k"]
    # (N, E, cap) combine weights and their 0/1 dispatch mask, as DeepSpeed's einsums use them
    combine = torch.zeros(N, E, cap, dtype=torch.float64)
    for tok in range(N):
        for j in range(k):
            e, loc = int(r["expert"][tok, j]), int(r["location"][tok, j])
            if e >= 0:
                combine = combine.index_put((torch.tensor([tok]), torch.tensor([e]), torch.tensor([loc])),
                                            r["weight"][tok, j].reshape(1), accumulate=True)
    dispatch = (combine != 0).double()
    buf = torch.einsum("sec,sm->ecm", dispatch, x)
    out = torch.stack([expert_mlp(experts[e], buf[e], c["swiglu"]) for e in range(E)])
    y = torch.einsum("sec,ecm->sm", combine, out)
    loss = (y * R).sum() + c["coef"] * r["l_aux"]
    loss.backward()
    res = {"y": y.detach().tolist(), "l_aux": float(r["l_aux"]), "dx": x.grad.tolist(), "drouter": wg.grad.tolist(),
           "experts": [{name: p.grad.tolist() for name, p in e.items()} for e in experts]}
    return res


if __name__ == "__main__":
    gate.run_json(layer)
