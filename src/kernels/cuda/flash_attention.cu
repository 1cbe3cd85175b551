// Flash attention's host side (flash_attention.h): which shapes it serves, where the saved
// state sits in `att`, and the dispatch to the kernels of flash_forward.cu and
// flash_backward.cu by storage type and head size.
#include "kernels/cuda/flash_attention.h"

#include <initializer_list>

#include "kernels/cuda/flash_kernels.cuh"
#include "kernels/cuda/pack.cuh"

namespace zt::cuda {

namespace {

size_t round256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Byte offsets of the saved state inside att: lse (B NH T fp32) at 0, O's copy (B T C) at the
// next 256 bytes, then the backward's dS tiles (64 x 64 for each tile pair on or below the
// diagonal, per head) where they fit in the rest of att's B NH T T 16-bit elements.
struct SavedLayout {
  size_t y, ds;
  bool ds_fits;
};
SavedLayout saved_layout(int B, int T, int C, int NH) {
  const size_t lse_bytes = round256(static_cast<size_t>(B) * NH * T * sizeof(float));
  const size_t y_bytes = round256(static_cast<size_t>(B) * T * C * sizeof(uint16_t));
  const size_t tiles = static_cast<size_t>(T + 63) / 64, pairs = tiles * (tiles + 1) / 2;
  const size_t ds_bytes = static_cast<size_t>(B) * NH * pairs * 64 * 64 * sizeof(uint16_t);
  const size_t att_bytes = static_cast<size_t>(B) * NH * T * T * sizeof(uint16_t);
  return {lse_bytes, lse_bytes + y_bytes, lse_bytes + y_bytes + ds_bytes <= att_bytes};
}

// The saved state's pointers inside att (ds null where the tiles do not fit).
struct Saved {
  float* lse;
  uint16_t* y;
  uint16_t* ds;
};
Saved saved_in(const void* att, int B, int T, int C, int NH) {
  char* p = static_cast<char*>(const_cast<void*>(att));
  const SavedLayout l = saved_layout(B, T, C, NH);
  return {reinterpret_cast<float*>(p), reinterpret_cast<uint16_t*>(p + l.y),
          l.ds_fits ? reinterpret_cast<uint16_t*>(p + l.ds) : nullptr};
}

// Calls f(tag, head size constant) for the served (t, hs).
template <class F>
void with_flash(DType t, int hs, F&& f) {
  auto by_size = [&](auto tag) {
    if (hs == 16) f(tag, std::integral_constant<int, 16>{});
    if (hs == 32) f(tag, std::integral_constant<int, 32>{});
    if (hs == 64) f(tag, std::integral_constant<int, 64>{});
  };
  if (t == DType::kBF16) by_size(Bf16{});
  if (t == DType::kF16) by_size(F16{});
}

// The kernels copy 16-byte pieces of the 16-bit inputs and of att (cp.async, ldmatrix) and
// store 16-bit pairs: a view off those boundaries would fault on the GPU, so it is refused.
Status check_aligned(std::initializer_list<const void*> buffers) {
  for (const void* p : buffers) {
    if (!aligned16(p)) return Status::InvalidArgument("flash attention: a buffer not 16-byte aligned");
  }
  return Status::OK();
}

}  // namespace

bool flash_attention_serves(DType t, int T, int C, int NH) {
  if (t == DType::kF32 || NH <= 0 || C % NH != 0 || C % 8 != 0) return false;
  const int hs = C / NH;
  if (hs != 16 && hs != 32 && hs != 64) return false;
  // per (b, t): 2 NH T bytes of att hold 4 NH bytes of lse and 2 C of O (plus 256 of alignment)
  const int64_t have = 2LL * NH * T, need = 4LL * NH + 2LL * C;
  return T >= 1 && have >= need + 256;
}

bool flash_attention_stores_ds(int B, int T, int C, int NH) {
  return saved_layout(B, T, C, NH).ds_fits;
}

size_t flash_attention_workspace_bytes(int B, int T, int NH) {
  return static_cast<size_t>(B) * NH * T * sizeof(float);
}

Status flash_attention_forward(DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH,
                               cudaStream_t stream) {
  if (!flash_attention_serves(t, T, C, NH)) return Status::InvalidArgument("flash attention does not serve this shape");
  ZT_RETURN_IF_ERROR(check_aligned({atty, att, qkv}));
  const Saved sv = saved_in(att, B, T, C, NH);
  with_flash(t, C / NH, [&](auto tag, auto hs) {
    flash::launch_forward<decltype(tag), decltype(hs)::value>(static_cast<uint16_t*>(atty), sv.y, sv.lse,
                                                   static_cast<const uint16_t*>(qkv), B, T, C, NH, stream);
  });
  return Status::OK();
}

Status flash_attention_backward(DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                                int T, int C, int NH, void* workspace, cudaStream_t stream, bool store_ds) {
  if (!flash_attention_serves(t, T, C, NH)) return Status::InvalidArgument("flash attention does not serve this shape");
  ZT_RETURN_IF_ERROR(check_aligned({dqkv, datty, qkv, att, workspace}));
  const Saved sv = saved_in(att, B, T, C, NH);
  with_flash(t, C / NH, [&](auto tag, auto hs) {
    flash::launch_backward<decltype(tag), decltype(hs)::value>(static_cast<uint16_t*>(dqkv),
                                                    static_cast<const uint16_t*>(datty),
                                                    static_cast<const uint16_t*>(qkv), sv.lse,
                                                    static_cast<float*>(workspace), sv.y, store_ds ? sv.ds : nullptr, B, T, C, NH,
                                                    stream);
  });
  return Status::OK();
}

}  // namespace zt::cuda
