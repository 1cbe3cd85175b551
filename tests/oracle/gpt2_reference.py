#!/usr/bin/python3
"""PyTorch GPT-2 reference for zerotrain's oracle tests (test-only; never a runtime dependency).

Usage: gpt2_reference.py WORKDIR            (the case below)
       gpt2_reference.py --hessian WORKDIR  (each block's dense Hessian spectrum, below)
Reads WORKDIR/case.json and WORKDIR/init.safetensors (zerotrain's weights, by name, in
nn.Linear (out, in) layout, plus int32 "tokens" and "targets" of shape (steps, B, T)),
builds the same GPT-2 in PyTorch, and writes WORKDIR/torch.safetensors with:
  logits (B, T, V), loss (1), grad.<param> for every parameter    -- batch 0, no update,
                                                                     under case["routes"] if given
  step_losses (steps)                                              -- AdamW training run
With --hessian, WORKDIR/init.safetensors holds the weights and int32 "tokens"/"targets" of
shape (M, B, T): the M micro-batches of one global batch; WORKDIR/hessian.safetensors gets
eigs.<b>, every eigenvalue (ascending) of the Hessian of the mean loss over the batch's
counted tokens with respect to block b's parameters, computed in float64 row by row
(double backward) and symmetrised.
The training run uses torch.optim.AdamW (decay on 2-D tensors only), clip_grad_norm_ and
DeepSpeed's WarmupLR formula, written here independently of zerotrain's C++.
Exit status 3 with a message when torch is not installed (the test then fails).
"""
import json
import math
import struct
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # the C++ test turns this into a failure, never a skip
    print(f"gpt2_reference.py: {e}; install Debian's python3-torch and python3-numpy", file=sys.stderr)
    sys.exit(3)


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    dtypes = {"F32": np.float32, "I32": np.int32}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(blob[base + b:base + end], dtype=dtypes[e["dtype"]]).reshape(e["shape"]).copy()
    return out


def write_safetensors(path, tensors, metadata=None):
    """F32 tensors in name order, header padded to 8 bytes; also hf_reference.py's writer."""
    header, offset, chunks = ({"__metadata__": metadata} if metadata else {}), 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        chunks.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


class Attention(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.n_head = NH

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Mlp(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C)
        self.c_proj = nn.Linear(4 * C, C)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C, eps=1e-5)
        self.attn = Attention(C, NH)
        self.ln_2 = nn.LayerNorm(C, eps=1e-5)
        self.mlp = Mlp(C)

    def forward(self, x, positions=None, scale=1.0):  # GPT-2's positions are in its input already
        x = x + self.attn(self.ln_1(x)) * scale
        return x + self.mlp(self.ln_2(x)) * scale


def routed(block, x, route):
    """One block under a route (case.json "routes"): DeepSpeed's progressive layer drop
    skips it (x passes through); random-LTD runs it on the tokens at route["positions"]
    (B lists of ascending positions) only, gathered per sequence so attention is causal
    among them, and writes its outputs back over x at those positions; route["scale"]
    multiplies the block's attention and MLP outputs (layer drop's 1 / keep probability)."""
    scale = route.get("scale", 1.0) if route else 1.0
    if not route or (not route.get("skip") and not route.get("positions")):
        return block(x, scale=scale)
    if route.get("skip"):
        return x
    idx = torch.tensor(route["positions"], dtype=torch.int64)
    rows = idx[..., None].expand(-1, -1, x.shape[2])
    return x.scatter(1, rows, block(torch.gather(x, 1, rows), positions=idx, scale=scale))


class Gpt2(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.wte = nn.Embedding(cfg["vocab_size"], C)
        self.wpe = nn.Embedding(cfg["n_positions"], C)
        self.h = nn.ModuleList(Block(C, cfg["n_head"]) for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(C, eps=1e-5)

    def forward(self, tokens, routes=None):
        T = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(T))
        for i, block in enumerate(self.h):
            x = routed(block, x, routes[i] if routes else None)
        return self.ln_f(x) @ self.wte.weight.t()


def deepspeed_warmup_lr(it, min_lr, max_lr, warmup_steps, warmup_type):
    """DeepSpeed WarmupLR.get_lr() at last_batch_iteration = it (it = -1: constructor state)."""
    if it < 0:
        return min_lr
    warmup_steps = max(2, warmup_steps)
    gamma = 1.0
    if it < warmup_steps:
        if warmup_type == "log":
            gamma = (1.0 / math.log(warmup_steps)) * math.log(it + 1)
        else:
            gamma = it / warmup_steps
    return min_lr + (max_lr - min_lr) * gamma


def build(cfg, init):
    model = Gpt2(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            src = init[name]
            if name == "wte.weight":
                src = src[: cfg["vocab_size"]]  # zerotrain may pad the vocabulary
            assert tuple(src.shape) == tuple(p.shape), (name, src.shape, p.shape)
            p.copy_(torch.from_numpy(src))
    return model


def loss_of(model, tokens, targets, V, routes=None):
    logits = model(tokens, routes)
    return logits, F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1)


def load_case(workdir):
    """case.json, its model, the vocabulary size, init.safetensors, and its tokens and targets."""
    case = json.load(open(f"{workdir}/case.json"))
    init = read_safetensors(f"{workdir}/init.safetensors")
    tokens = torch.from_numpy(init["tokens"].astype(np.int64))
    targets = torch.from_numpy(init["targets"].astype(np.int64))
    return case, case["model"], case["model"]["vocab_size"], init, tokens, targets


def objective(model, loss):
    """The loss a step minimises: the cross-entropy, plus a mixture of experts' balance loss
    times its coefficient where the model has one (its forward sets model.aux_loss)."""
    aux = getattr(model, "aux_loss", None)
    return loss if aux is None else loss + model.aux_coef * aux


def run_case(workdir, build):
    """The oracle's outputs for the case in workdir: logits, loss and gradients of the first
    batch, then the losses of case["steps"] AdamW steps (DeepSpeed's WarmupLR, clipping), for
    the model build(cfg, init) makes (this file's Gpt2, or another family's)."""
    case, cfg, V, init, tokens, targets = load_case(workdir)
    out = {}

    model = build(cfg, init)
    logits, loss = loss_of(model, tokens[0], targets[0], V, case.get("routes"))
    objective(model, loss).backward()
    out["logits"] = logits.detach().numpy()
    out["loss"] = np.array([loss.item()], dtype=np.float32)
    if getattr(model, "aux_loss", None) is not None:
        out["aux"] = np.array([float(model.aux_loss)], dtype=np.float64)
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.numpy() if p.grad is not None else np.zeros(tuple(p.shape), np.float32)  # a skipped block

    opt_cfg, sched = case["adamw"], case["warmup_lr"]
    model = build(cfg, init)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": opt_cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=sched["warmup_max_lr"], betas=(opt_cfg["beta1"], opt_cfg["beta2"]), eps=opt_cfg["eps"])
    losses, auxes = [], []
    for step in range(case["steps"]):
        opt.zero_grad(set_to_none=False)
        _, loss = loss_of(model, tokens[step], targets[step], V)
        objective(model, loss).backward()
        if getattr(model, "aux_loss", None) is not None:
            auxes.append(float(model.aux_loss))
        torch.nn.utils.clip_grad_norm_(model.parameters(), case["gradient_clipping"])
        lr = deepspeed_warmup_lr(step - 1, sched["warmup_min_lr"], sched["warmup_max_lr"],
                                 sched["warmup_num_steps"], sched["warmup_type"])
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
        losses.append(loss.item())
    out["step_losses"] = np.array(losses, dtype=np.float64)
    if auxes:
        out["step_aux"] = np.array(auxes, dtype=np.float64)
    write_safetensors(f"{workdir}/torch.safetensors", out)


def block_hessian_spectra(workdir, build):
    _, cfg, V, init, tokens, targets = load_case(workdir)
    model = build(cfg, init).double()
    count = int((targets >= 0).sum())
    out = {}
    for b, block in enumerate(model.h):
        params = list(block.parameters())
        loss = sum(F.cross_entropy(model(tokens[m]).view(-1, V), targets[m].view(-1), ignore_index=-1, reduction="sum")
                   for m in range(tokens.shape[0])) / count
        flat = torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, params, create_graph=True)])
        H = torch.stack([torch.cat([r.reshape(-1) for r in torch.autograd.grad(flat[i], params, retain_graph=True)])
                         for i in range(flat.numel())])
        out[f"eigs.{b}"] = torch.linalg.eigvalsh((H + H.T) / 2).numpy()
    write_safetensors(f"{workdir}/hessian.safetensors", out)


def main(argv):
    if argv[0] == "--hessian":
        block_hessian_spectra(argv[1], build)
    else:
        run_case(argv[0], build)


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(2)
    main(sys.argv[1:])
