// docs/config-coverage.md, generated from the parser itself: every key the section
// readers read (recorded through ScopedKeyLog while parsing probe configs that open every
// section, with what each expects and its default), and the tables of key_tables.h
// (aliases, "auto", inert keys, refusals). `zerotrain config-coverage` prints it and a
// test compares it with the checked-in file, so the document cannot drift.
// Thread-safety: pure functions (the key log is thread-local).
#pragma once

#include <string>

#include "core/status.h"

namespace zt {

// The markdown document, or an error naming a table entry whose key the parser never
// reads (a table that drifted from the readers).
StatusOr<std::string> config_coverage_markdown();

}  // namespace zt
