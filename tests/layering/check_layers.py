#!/usr/bin/env python3
"""Include layering of src/: every #include "folder/..." must point down the layers.

  core (0) <- io, tensor, comm (1) <- kernels (2) <- backend (3) <- optim (4)
  <- nn, data (5) <- parallel (6) <- config, checkpoint (7) <- engine (8) <- planner (9) <- cli, testing (10)

A file may include its own folder and any folder of a lower layer; there are no exceptions
(kernels implement the tables declared in kernels/, over tensor/'s dtypes; backends wrap
them). comm may include core only. Inside a folder listed in SUBRANK its subfolders are
layered the same way (parallel: grid <- zero, pipeline, offload <- data, param_server), and
an unknown subfolder there is an error. Tests (*_test.cc) may also use the shared test
helpers in testing/. Unknown folders are errors too, so a new folder must be placed here.

  check_layers.py SRC_DIR            exit 1 and list every upward include
  check_layers.py --plant SRC_DIR    copy SRC_DIR, plant an upward include (core -> engine)
                                     and a sideways one (parallel/zero -> parallel/param_server),
                                     and exit 0 only if the checker reports exactly those two
"""
import os
import re
import shutil
import sys
import tempfile

RANK = {
    "core": 0,
    "io": 1, "tensor": 1, "comm": 1,
    "kernels": 2,
    "backend": 3,
    "optim": 4,
    "nn": 5, "data": 5,
    "parallel": 6,
    "config": 7, "checkpoint": 7,
    "engine": 8,
    "planner": 9,
    "cli": 10, "testing": 10,
}
# Layers of the subfolders of a folder ("" = files directly in it).
SUBRANK = {
    "parallel": {"": 0, "zero": 1, "pipeline": 1, "offload": 1, "data": 2, "param_server": 2},
}
ONLY = {"comm": {"core"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([a-z_]+/)?')


def allowed(src, dst, is_test):
    if src == dst or (is_test and dst == "testing"):
        return True
    if src in ONLY:
        return dst in ONLY[src]
    return RANK[dst] < RANK[src]


def subfolder(rel_parts):
    """The subfolder of a path below its top folder ("" for a file directly in it)."""
    return rel_parts[1] if len(rel_parts) > 2 else ""


def sub_violation(folder, src_sub, dst_sub):
    """Why an include between two subfolders of `folder` is not allowed, or None."""
    ranks = SUBRANK[folder]
    for sub in (src_sub, dst_sub):
        if sub not in ranks:
            return f"subfolder '{folder}/{sub}' has no layer (add it to SUBRANK)"
    if src_sub == dst_sub or ranks[dst_sub] < ranks[src_sub]:
        return None
    return f"{folder}/{src_sub or '.'} (sublayer {ranks[src_sub]}) includes {folder}/{dst_sub} (sublayer {ranks[dst_sub]})"


def violations(src_dir):
    found = []
    for root, _, files in os.walk(src_dir):
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".inc", ".cu", ".cuh")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            parts = rel.split(os.sep)
            folder = parts[0]
            if folder not in RANK:
                found.append(f"{rel}: folder '{folder}' has no layer (add it to RANK in {__file__})")
                continue
            if folder in SUBRANK and subfolder(parts) not in SUBRANK[folder]:
                found.append(f"{rel}: subfolder '{folder}/{subfolder(parts)}' has no layer (add it to SUBRANK)")
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
                    elif dst == folder and folder in SUBRANK:
                        dst_sub = (m.group(2) or "").rstrip("/")
                        if dst_sub and not os.path.isdir(os.path.join(src_dir, folder, dst_sub)):
                            dst_sub = ""  # a file directly in the folder
                        why = sub_violation(folder, subfolder(parts), dst_sub)
                        if why:
                            found.append(f"{rel}:{lineno}: {why}: {line.strip()}")
    return found


def plant(src_dir):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src_dir, copy)
        with open(os.path.join(copy, "core", "status.h"), "a", encoding="utf-8") as f:
            f.write('\n#include "engine/trainer.h"\n')
        with open(os.path.join(copy, "parallel", "zero", "model_states.h"), "a", encoding="utf-8") as f:
            f.write('\n#include "parallel/param_server/ps_layout.h"\n')
        found = sorted(violations(copy))
        print("\n".join(found))
        ok = (len(found) == 2 and found[0].startswith("core/status.h:") and "engine" in found[0] and
              found[1].startswith("parallel/zero/model_states.h:") and "parallel/param_server" in found[1])
        print("planted upward includes (a layer, a sublayer)", "caught" if ok else "NOT caught")
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
