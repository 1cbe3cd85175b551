// <save_dir>/latest: which checkpoint is current. DeepSpeed keeps only the tag there;
// zerotrain's first line is also the tag (so `cat latest` reads the same), followed by
// the manifest's checksum and a last line checksumming the lines above:
//   global_step200
//   manifest 0123456789abcdef
//   xxh3 fedcba9876543210
// It is written atomically, last, by rank 0 after every shard and the manifest are
// complete, so it only ever names a whole checkpoint.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace zt {

inline constexpr size_t kMaxLatestBytes = 4096;

struct LatestPointer {
  std::string tag;
  std::string manifest_checksum;  // XXH3 of the manifest file's bytes
};

std::string latest_to_text(const LatestPointer& p);
// Errors (Corruption) name `label` and, for a checksum mismatch, expected and actual.
StatusOr<LatestPointer> parse_latest(const std::string& text, const std::string& label);

// A tag is a plain directory name: letters, digits, '_', '-', '.', not starting with '.'.
bool valid_tag(const std::string& tag);

}  // namespace zt
