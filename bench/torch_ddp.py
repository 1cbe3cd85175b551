#!/usr/bin/python3
"""PyTorch DistributedDataParallel (gloo) reference for bench/zero.sh: the same GPT-2 as
tests/oracle/gpt2_reference.py, AdamW, one thread per rank, DDP's default 25 MB buckets.
Launch one process per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; rank
0 prints one JSON line with the median step time and tokens/s of the whole job.
  torch_ddp.py [--batch B] [--seq T] [--steps K] [--warmup W] [--layers L] [--heads H] [--embd C] [--vocab V]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from gpt2_reference import Gpt2  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    for k, d in [("batch", 4), ("seq", 64), ("steps", 4), ("warmup", 1), ("layers", 12), ("heads", 12),
                 ("embd", 768), ("vocab", 50257)]:
        ap.add_argument("--" + k, type=int, default=d)
    a = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Gpt2({"n_embd": a.embd, "vocab_size": a.vocab, "n_positions": 1024, "n_layer": a.layers,
                  "n_head": a.heads})
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    decay = [p for p in ddp.parameters() if p.dim() >= 2]
    no_decay = [p for p in ddp.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4)
    g = torch.Generator().manual_seed(1 + rank)
    x = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)
    y = torch.roll(x, -1)
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(ddp(x).view(-1, a.vocab), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
        opt.step()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    if rank == 0:
        print(json.dumps({"impl": "pytorch_ddp", "ranks": world, "version": torch.__version__, "ms": 1e3 * med,
                          "ms_min": 1e3 * min(times), "ms_max": 1e3 * max(times),
                          "tokens_per_s": a.batch * a.seq * world / med}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
