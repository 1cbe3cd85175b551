#!/usr/bin/env python3
"""Include layering of src/: every #include "folder/..." must point down the layers.

  core (0) <- io, tensor, comm (1) <- kernels, backend (2) <- optim (3)
  <- nn, data (4) <- config, parallel (5) <- checkpoint (6) <- engine (7) <- planner (8) <- cli, testing (9)

A file may include its own folder, any folder of a lower layer, and the peers listed in
PEERS (kernels and backend are one layer: the CPU backend wraps the kernels, and kernels
use the backend's dtype). comm may include core only. Tests (*_test.cc) may also use the
shared test helpers in testing/. Unknown folders are errors too, so a new folder must be
placed here.

  check_layers.py SRC_DIR            exit 1 and list every upward include
  check_layers.py --plant SRC_DIR    copy SRC_DIR, plant an upward include, and exit 0
                                     only if the checker reports exactly that include
"""
import os
import re
import shutil
import sys
import tempfile

RANK = {
    "core": 0,
    "io": 1, "tensor": 1, "comm": 1,
    "kernels": 2, "backend": 2,
    "optim": 3,
    "nn": 4, "data": 4,
    "config": 5, "parallel": 5,
    "checkpoint": 6,
    "engine": 7,
    "planner": 8,
    "cli": 9, "testing": 9,
}
PEERS = {("kernels", "backend"), ("backend", "kernels")}
ONLY = {"comm": {"core"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def allowed(src, dst, is_test):
    if src == dst or (is_test and dst == "testing"):
        return True
    if src in ONLY:
        return dst in ONLY[src]
    return (src, dst) in PEERS or RANK[dst] < RANK[src]


def violations(src_dir):
    found = []
    for root, _, files in os.walk(src_dir):
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".inc", ".cu", ".cuh")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            folder = rel.split(os.sep)[0]
            if folder not in RANK:
                found.append(f"{rel}: folder '{folder}' has no layer (add it to RANK in {__file__})")
                continue
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) not in RANK and m.group(1) not in os.listdir(src_dir):
                        continue
                    dst = m.group(1)
                    if dst not in RANK:
                        found.append(f"{rel}:{lineno}: includes unknown folder '{dst}'")
                    elif not allowed(folder, dst, name.endswith("_test.cc")):
                        found.append(f"{rel}:{lineno}: {folder} (layer {RANK[folder]}) includes {dst} "
                                     f"(layer {RANK[dst]}): {line.strip()}")
    return found


def plant(src_dir):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src_dir, copy)
        target = os.path.join(copy, "core", "status.h")
        with open(target, "a", encoding="utf-8") as f:
            f.write('\n#include "engine/trainer.h"\n')
        found = violations(copy)
        print("\n".join(found))
        ok = len(found) == 1 and found[0].startswith("core/status.h:") and "engine" in found[0]
        print("planted upward include", "caught" if ok else "NOT caught")
        return 0 if ok else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--plant":
        return plant(argv[2])
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = violations(argv[1])
    for v in found:
        print(v)
    print(f"{len(found)} upward includes" if found else "include layering: every include points down")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
