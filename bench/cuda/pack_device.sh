#!/usr/bin/env bash
# Packs what the GPU machine lacks into .device/ (git-ignored; at most 64 MiB travel):
# the CUDA build's zerotrain, zt_cuda_tests (with zt_dp_train, which CudaDp runs under mpirun),
# gpu_kernels_bench and offload_bench, stripped (with the CPU
# benchmarks train_step_bench and fma_peak, for the host's core scaling), and
# Debian's runtime .debs of the libraries that machine does not have (OpenBLAS's OpenMP
# build, oneDNN, jemalloc, liburing, ISA-L, SentencePiece, the OpenCL loader oneDNN
# links; ../shared/gpu-notes.md lists what it has). bench/cuda/device_check.sh unpacks
# them there into /tmp, never into /.
# usage: bench/cuda/pack_device.sh        (ZT_BUILD_DIR: the CUDA build, default build/)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${ZT_BUILD_DIR:-$ROOT/build}
DEST=$ROOT/.device
if [ ! -f "$BUILD/zt_cuda_tests" ] && ! grep -q "ZT_HAVE_CUDA" "$BUILD/build.ninja" 2>/dev/null; then
  echo "pack_device: $BUILD is not a CUDA build (configure with -DZT_CUDA=on and a CUDA toolkit)" >&2
  exit 2
fi
ninja -C "$BUILD" zerotrain_cli zt_cuda_tests zt_dp_train gpu_kernels_bench offload_bench train_step_bench fma_peak >/dev/null
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/debs"
for b in zerotrain zt_cuda_tests zt_dp_train gpu_kernels_bench offload_bench train_step_bench fma_peak; do strip -o "$DEST/bin/$b" "$BUILD/$b"; done
# The binaries travel xz-compressed (a third of their size); device_check.sh unpacks them.
tar -C "$DEST" -cf - bin | xz -T2 -6 > "$DEST/bin.tar.xz"
rm -rf "$DEST/bin"
(cd "$DEST/debs" && apt-get download -q libopenblas0-openmp libdnnl2 libjemalloc2 liburing2 libisal2 \
  libsentencepiece0 ocl-icd-libopencl1 2>/dev/null)
du -sh "$DEST" | awk '{print "pack_device: .device holds " $1 " (the limit that travels is 64 MiB)"}'
