// Corpus preparation: text documents -> token files (what `zerotrain prepare` and the
// demo run). Documents are tokenized separately and joined with the tokenizer's
// end-of-text token; every k-th document (k from val_fraction) goes to the validation
// split, so both splits sample the whole corpus.
#pragma once

#include <string>
#include <vector>

#include "core/progress_fn.h"
#include "core/status.h"
#include "data/token_file.h"
#include "data/tokenizer.h"

namespace zt {

struct PrepareOptions {
  std::vector<std::string> inputs;  // text files
  std::string separator;            // a line equal to this splits a file into documents ("" = one per file)
  std::string train_output;
  std::string val_output;           // "" = no validation split
  double val_fraction = 0.1;
  TokenFileFormat format = TokenFileFormat::kLlmc;
  // Called after every document with the input bytes done and the inputs' total.
  ProgressFn progress;
};

struct PrepareReport {
  int64_t documents = 0;
  int64_t train_tokens = 0;
  int64_t val_tokens = 0;
  int64_t bytes = 0;
};

// Refuses (InvalidArgument) a tokenizer with more than 65536 ids: both formats hold uint16.
StatusOr<PrepareReport> prepare_corpus(const PrepareOptions& options, const Tokenizer& tokenizer);

// Splits text into documents at lines equal to `separator` (empty documents dropped).
std::vector<std::string> split_documents(const std::string& text, const std::string& separator);

}  // namespace zt
