// The embedded default run: `zerotrain train` with no --config trains a small byte-level
// GPT on Debian's fortunes corpus (package "fortunes"), prepared automatically into
// <output_dir>/data on first use, and ends by printing a sample.
#pragma once

#include <string>

#include "config/config.h"
#include "core/status.h"
#include "data/tokenizer.h"

namespace zt {

// The default configuration (a ds_config.json with zerotrain's sections).
const char* demo_config_text();

// Where the fortunes text lives (ZT_DEMO_CORPUS overrides, for tests).
std::string demo_corpus_dir();

// If config->data.train is empty: points data.train/val at
// <output_dir>/data/fortunes_<tokenizer>_{train,val}.bin and, when `write` (one rank
// of a job), prepares those files from the fortunes corpus if they are missing.
Status prepare_demo_data(ZtConfig* config, const Tokenizer& tokenizer, bool write);

}  // namespace zt
