// zerotrain's version, recorded in checkpoints and printed by `zerotrain --version`.
// The minor number follows the landed issues; checkpoints carry their own format version.
#pragma once

namespace zt {

inline constexpr const char* kZerotrainVersion = "0.6.0";

}  // namespace zt
