#!/usr/bin/python3
"""PyTorch statement of MoE routing for kernels/cpu/moe_gate_test.cc (test-only).

Usage: moe_gate_reference.py CASES.json OUT.json   (a list of cases in, a list of results out)
Written from DeepSpeed's documented gating rules (deepspeed/moe/sharded_moe.py: top1gating,
top2gating, topkgating) and HF Mixtral/Qwen2-MoE routing, independently of zerotrain's C++,
with torch autograd for the backward. The random draws (Gumbel, uniform) come from the case,
so both sides route alike. Where DeepSpeed leaves an order to torch.topk (ties), this states
zerotrain's rule: lower token or expert first.
CASE: logits (N, E), k, routing ("deepspeed"|"mixtral"), capacity_factor, min_capacity,
drop_tokens, use_rts, rsample, second_sampling, drop_policy ("probs"|"position"),
renormalize, gumbel, uniform (N, E or []), dweight (N, k), dl_aux.
OUT: expert, location (N, k; -1 dropped), weight (N, k), capacity, counts, l_aux, dlogits.
Exit status 3 when torch is missing (the C++ test then fails).
"""
import json
import math
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"moe_gate_reference.py: {e}; install Debian's python3-torch", file=sys.stderr)
    sys.exit(3)


def stable_desc(v, dim):
    return torch.sort(v, dim=dim, descending=True, stable=True)[1]


def capacity(N, E, factor, min_cap):
    return max(int(math.ceil(N / E * factor)), min_cap)


def keep_first(mask, score, cap):
    """Per expert column, keep the cap assigned rows of largest score (ties: lower row)."""
    keep = torch.zeros_like(mask)
    for e in range(mask.shape[1]):
        rows = [t for t in stable_desc(score[:, e], 0).tolist() if mask[t, e]]
        for t in rows[:cap]:
            keep[t, e] = True
    return mask & keep


def route(c, logits=None):
    """The gate on case c's logits (or on the given differentiable logits): a dict with
    weight (N, k, differentiable), expert and location (N, k; -1 dropped), capacity, counts
    and l_aux (differentiable)."""
    if logits is None:
        logits = torch.tensor(c["logits"], dtype=torch.float64, requires_grad=True)
    N, E = logits.shape
    k, ds = c["k"], c["routing"] == "deepspeed"
    gates = F.softmax(logits, dim=1)
    gumbel = torch.tensor(c["gumbel"], dtype=torch.float64) if c["gumbel"] else None
    # choices, (N, k)
    if not ds or k > 2:
        choice = stable_desc(gates.detach(), 1)[:, :k]
    elif k == 1:
        noisy = logits.detach() + gumbel if c["rsample"] else gates.detach()
        choice = torch.argmax(noisy, dim=1, keepdim=True)
    else:
        first = torch.argmax(gates.detach(), dim=1)
        noisy = logits.detach() + (gumbel if c["second_sampling"] else 0.0)
        noisy = noisy.masked_fill(F.one_hot(first, E).bool(), float("-inf"))
        choice = torch.stack([first, torch.argmax(noisy, dim=1)], dim=1)
    slot_mask = [F.one_hot(choice[:, j], E).bool() for j in range(k)]   # per slot (N, E)
    counts = sum(m.long() for m in slot_mask).sum(0)
    ce_mask = slot_mask[0] if ds and k <= 2 else sum(m.long() for m in slot_mask).bool()
    ce = ce_mask.double().mean(0)
    me = gates.mean(0)
    l_aux = (me * ce).sum() * E / (k if k > 2 else 1) if ds else torch.zeros((), dtype=torch.float64)
    drop = ds and c["drop_tokens"]
    cap = capacity(N, E, c["capacity_factor"] * k, c["min_capacity"]) if drop else int(counts.max())
    if ds and k == 1 and not drop:
        cap = min(cap, N)
    kept = [m.clone() for m in slot_mask]
    if drop and k == 1:
        score = torch.tensor(c["uniform"], dtype=torch.float64) if c["use_rts"] else -torch.arange(N, dtype=torch.float64)[:, None].expand(N, E)
        kept[0] = keep_first(kept[0], score, cap)
    if drop and k > 2 and c["drop_policy"] == "probs":
        any_mask = sum(m.long() for m in kept).bool()
        keep = keep_first(any_mask, gates.detach(), cap)
        kept = [m & keep for m in kept]
    # locations: token order per expert; DeepSpeed's top-2 puts second choices after all first ones
    loc = torch.full((N, k), -1, dtype=torch.long)
    nxt = [0] * E
    order = [(t, j) for j in range(k) for t in range(N)] if ds and k == 2 else [(t, j) for t in range(N) for j in range(k)]
    by_pos = drop and (k == 2 or (k > 2 and c["drop_policy"] == "position"))
    for t, j in order:
        e = int(choice[t, j])
        if not kept[j][t, e]:
            continue
        l = nxt[e]
        nxt[e] += 1
        if by_pos and l >= cap:
            kept[j][t, e] = False
            continue
        loc[t, j] = l
    g_kept = [gates * m.double() for m in kept]
    norm = (k >= 2) if ds else c["renormalize"]
    if norm:
        denom = torch.clamp(sum(gk.sum(1) for gk in g_kept), min=torch.finfo(torch.float32).eps)
        g_kept = [gk / denom[:, None] for gk in g_kept]
    weight = torch.stack([g_kept[j].gather(1, choice[:, j:j + 1]).squeeze(1) for j in range(k)], dim=1)
    expert = torch.where(loc >= 0, choice, torch.full_like(choice, -1))
    return {"weight": weight, "expert": expert, "location": loc, "capacity": cap, "counts": counts, "l_aux": l_aux}


def gate_case(c):
    logits = torch.tensor(c["logits"], dtype=torch.float64, requires_grad=True)
    r = route(c, logits)
    loss = (r["weight"] * torch.tensor(c["dweight"], dtype=torch.float64)).sum() + c["dl_aux"] * r["l_aux"]
    loss.backward()
    return {"expert": r["expert"].tolist(), "location": r["location"].tolist(), "weight": r["weight"].detach().tolist(),
            "capacity": r["capacity"], "counts": r["counts"].tolist(), "l_aux": float(r["l_aux"]),
            "dlogits": logits.grad.tolist()}


def mixtral_balance_case(c):
    """HF load_balancing_loss_func over the layers (no attention mask), plus each layer's
    combine weights, differentiated together."""
    logits = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in c["layers"]]
    k = c["k"]
    E = logits[0].shape[1]
    loss = torch.zeros((), dtype=torch.float64)
    for lg, dw in zip(logits, c["dweights"]):
        r = route({"k": k, "routing": "mixtral", "renormalize": True, "gumbel": [], "drop_tokens": False}, lg)
        loss = loss + (r["weight"] * torch.tensor(dw, dtype=torch.float64)).sum()
    cat = torch.cat(logits, dim=0)
    probs = F.softmax(cat, dim=-1)
    selected = stable_desc(probs.detach(), 1)[:, :k]
    tokens_per_expert = F.one_hot(selected, E).double().mean(dim=0)      # (k, E)
    router_prob_per_expert = probs.mean(dim=0)                           # (E)
    aux = (tokens_per_expert * router_prob_per_expert.unsqueeze(0)).sum() * E
    (loss + c["coef"] * aux).backward()
    return {"aux": float(aux), "dlogits": [lg.grad.tolist() for lg in logits]}


def run_case(c):
    return mixtral_balance_case(c) if c.get("kind") == "mixtral_balance" else gate_case(c)


def run_json(fn):
    """The tests/moe scripts' command line: a JSON list of cases in argv[1], the list of
    fn(case) written to argv[2]."""
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump([fn(c) for c in cases], f)


if __name__ == "__main__":
    run_json(run_case)
