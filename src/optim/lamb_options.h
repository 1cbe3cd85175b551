// The options of DeepSpeed's LAMB family (ops/lamb/fused_lamb.py, runtime/fp16/onebit/),
// with DeepSpeed's defaults, shared by the config reader and the optimizers.
// LambOptions: the LAMB update (lamb.h). OneBitOptions: the compressed-communication
// variants 1-bit Adam, 0/1 Adam and 1-bit LAMB (onebit_*.h).
// Thread-safety: plain values.
#pragma once

#include <cstdint>

namespace zt {

struct LambOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool bias_correction = true;
  bool eps_inside_sqrt = false;  // DeepSpeed's eps_mode 0: sqrt(v + eps); default sqrt(v) + eps
  double max_coeff = 10.0;       // the trust ratio ||w|| / ||update|| is clamped to [min_coeff, max_coeff]
  double min_coeff = 0.01;
};

// 1-bit Adam (OneBitAdam), 0/1 Adam (ZeroOneAdam) and 1-bit LAMB (OneBitLamb). lr, betas,
// eps, weight_decay, bias_correction, max/min_coeff come from `lamb` (Adam variants ignore
// the coefficients).
struct OneBitOptions {
  LambOptions base;
  int64_t freeze_step = 100000;      // OneBitAdam / OneBitLamb: uncompressed warm-up steps
  // 0/1 Adam (zoadam.py defaults)
  int64_t var_freeze_step = 100000;  // the variance stops updating after this step
  int64_t var_update_scaler = 16;    // the interval between variance updates doubles every this many updates
  int64_t local_step_scaler = 32678; // the interval between synchronisations doubles every this many steps
  int64_t local_step_clipper = 16;   // ... up to this many steps
  // 1-bit LAMB (onebit/lamb.py defaults)
  double coeff_beta = 0.9;           // EMA of the trust ratio during warm-up
  double factor_max = 4.0;           // bounds of the ratio that rescales the frozen ratio after warm-up
  double factor_min = 0.5;
  double factor_threshold = 0.1;     // the ratio may move by at most this fraction per step
};

}  // namespace zt
