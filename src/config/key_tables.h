// The tables behind zerotrain's treatment of DeepSpeed's vocabulary beyond plain reading:
// legacy and alias names mapped to their modern keys, "auto" values and what they
// resolve to, keys accepted with no effect here (and why), and keys refused (GPU-only, or
// a feature not built) with the reason and what to use instead. normalize.cc applies the
// first two, the section readers the last two, and coverage.cc prints all four into
// docs/config-coverage.md, checking that every key named here is one the parser reads.
// Pointers are JSON pointers ("/zero_optimization/cpu_offload").
// Thread-safety: constant data.
#pragma once

#include <string>
#include <vector>

namespace zt {

// A key DeepSpeed still accepts under an old or alternative name. `from` moves to `to`
// (both JSON pointers); giving both is an error. `note` is printed in the banner.
struct KeyAlias {
  const char* from;
  const char* to;
  const char* note;
};
const std::vector<KeyAlias>& key_aliases();

// A key whose value may be "auto" (HuggingFace's DeepSpeed integration) and what it
// becomes here.
struct AutoRule {
  const char* pointer;
  const char* resolves_to;
};
const std::vector<AutoRule>& auto_rules();

// A key read and validated but with no effect on a zerotrain run, and why.
struct InertKey {
  const char* pointer;
  const char* why;
};
const std::vector<InertKey>& inert_keys();

enum class RefusalKind { kGpuOnly, kNotBuilt, kNoNetwork };

// A section refused unless absent or {"enabled": false} (its other keys then configure
// nothing): `why` and, where there is one, what to use instead.
struct RefusedKey {
  const char* pointer;
  RefusalKind kind;
  const char* why;
  const char* instead;  // "" when there is no substitute
};
const std::vector<RefusedKey>& refused_sections();
// The same kinds for single values refused inside accepted sections (e.g.
// /aio/use_gds: true). Readers fail with refusal_text(); the doc lists them.
const std::vector<RefusedKey>& refused_values();
const RefusedKey* find_refused_value(const std::string& pointer);

// "needs a GPU: ...; use X instead" style text of one refusal.
std::string refusal_text(const RefusedKey& r);
const char* refusal_kind_name(RefusalKind kind);

}  // namespace zt
