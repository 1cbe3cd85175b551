#!/usr/bin/env python3
"""Static machine-code figures of zerotrain's CUDA kernels, for work without a GPU.

For each .cu file given, compiles it as the build does (nvcc -ptx for sm_90, -O3 --fmad=false)
and assembles the PTX with ptxas, then prints per kernel (names shortened): registers, spill
bytes, static SASS instructions (the cubin's text section bytes / 16), and for the kernel's
loops the PTX instructions between a backward branch and its target, with the count of `mma`
among them. Needs the CUDA toolkit's nvcc and ptxas, not a GPU.

  python3 bench/cuda/static_sass.py src/kernels/cuda/flash_backward.cu [--filter Bf16ELi64]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def compile_ptx(src, out_dir):
    ptx = os.path.join(out_dir, os.path.basename(src) + ".ptx")
    subprocess.run([f"{CUDA}/bin/nvcc", "-DZT_HAVE_CUDA=1", f"-I{ROOT}/src", f"-isystem={CUDA}/include", "-O3",
                    "-DNDEBUG", "-arch=sm_90", "--fmad=false", "-std=c++17", "-ptx", "-x", "cu", src, "-o", ptx],
                   check=True)
    cubin = ptx + ".cubin"
    info = subprocess.run([f"{CUDA}/bin/ptxas", "-arch=sm_90", "-v", ptx, "-o", cubin], check=True,
                          capture_output=True, text=True).stderr
    return ptx, cubin, info


def ptxas_info(info):
    """kernel -> (registers, spill store bytes) from ptxas -v."""
    out, name = {}, None
    for line in info.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            name = m.group(1)
        m = re.search(r"(\d+) bytes spill stores", line)
        if m and name:
            out.setdefault(name, [0, 0])[1] = int(m.group(1))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            out.setdefault(name, [0, 0])[0] = int(m.group(1))
    return out


def sass_sizes(cubin):
    """kernel -> static SASS instructions (text section bytes / 16)."""
    text = subprocess.run(["readelf", "-SW", cubin], capture_output=True, text=True).stdout
    sizes = {}
    for m in re.finditer(r"\.text\.(\S+)\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", text):
        sizes[m.group(1)] = int(m.group(2), 16) // 16
    return sizes


def loops(ptx_text, kernel):
    """The kernel's loops: (instructions, mma) between each backward branch and its target."""
    body = re.split(r"\n(?=\.visible \.entry|\.entry|\.weak \.entry)", ptx_text)
    found = []
    for f in body:
        m = re.search(r"\.entry\s+(\S+)\(", f)
        if not m or m.group(1) != kernel:
            continue
        labels, instr = {}, []
        for line in (x.strip() for x in f.split("\n")):
            if re.match(r"^\$\w+:$", line):
                labels[line[:-1]] = len(instr)
            elif line and not line.startswith((".", "//", "{", "}")):
                instr.append(line)
        for i, line in enumerate(instr):
            b = re.search(r"bra(?:\.uni)?\s+(\$\w+);", line)
            if b and labels.get(b.group(1), i + 1) <= i:
                span = instr[labels[b.group(1)]:i + 1]
                found.append((len(span), sum(1 for x in span if "mma.sync" in x)))
    return found


def short(name):
    return re.sub(r"_GLOBAL__N__\w+?_\d+(?=\d+[a-z])", "", name)[-70:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sources", nargs="+")
    p.add_argument("--filter", default="", help="only kernels whose mangled name contains this")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for src in a.sources:
            ptx, cubin, info = compile_ptx(src, tmp)
            text, regs, sizes = open(ptx).read(), ptxas_info(info), sass_sizes(cubin)
            print(f"{src}:")
            for name in sorted(regs):
                if a.filter not in name:
                    continue
                big = [f"{n} ({m} mma)" for n, m in loops(text, name) if n >= 100]
                print(f"  {short(name):70s} regs {regs[name][0]:3d} spill {regs[name][1]:3d} "
                      f"SASS {sizes.get(name, 0):5d}  loops: {', '.join(big) or '-'}")


if __name__ == "__main__":
    sys.exit(main())
