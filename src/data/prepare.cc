// prepare_corpus: read, split, tokenize, write.
#include "data/prepare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/atomic_file.h"

namespace zt {

std::vector<std::string> split_documents(const std::string& text, const std::string& separator) {
  std::vector<std::string> docs;
  if (separator.empty()) {
    if (!text.empty()) docs.push_back(text);
    return docs;
  }
  std::string current;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (line == separator) {
      if (!current.empty()) docs.push_back(std::move(current));
      current.clear();
    } else {
      current += line;
      if (!last) current += '\n';
    }
    pos = end + 1;
  }
  if (!current.empty()) docs.push_back(std::move(current));
  return docs;
}

StatusOr<PrepareReport> prepare_corpus(const PrepareOptions& o, const Tokenizer& tok) {
  if (o.inputs.empty()) return Status::InvalidArgument("prepare: no input files");
  const bool wide = tok.vocab_size() > 65536;  // uint32 tokens (llm.c's Llama 3 variant)
  if (wide && o.format != TokenFileFormat::kLlmc) {
    return Status::InvalidArgument("prepare: the " + std::string(tok.name()) + " tokenizer has " +
                                   std::to_string(tok.vocab_size()) + " ids, but raw uint16 token files hold at most "
                                   "65536; use the llm.c format, which stores uint32 tokens for such vocabularies");
  }
  if (!o.val_output.empty() && !(o.val_fraction > 0.0 && o.val_fraction < 1.0)) {
    return Status::InvalidArgument("prepare: --val-fraction must be in (0, 1)");
  }
  const int64_t every = o.val_output.empty() ? 0 : std::max<int64_t>(2, std::llround(1.0 / o.val_fraction));
  PrepareReport report;
  std::vector<int32_t> train, val;
  uint64_t total = 0, done = 0;
  for (const std::string& path : o.inputs) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec) total += size;  // the read below reports the errors
  }
  for (const std::string& path : o.inputs) {
    ZT_ASSIGN_OR_RETURN(std::string text, read_file(path));
    report.bytes += static_cast<int64_t>(text.size());
    for (const std::string& doc : split_documents(text, o.separator)) {
      std::vector<int32_t>& dst = (every > 0 && report.documents % every == every - 1) ? val : train;
      const std::vector<int32_t> ids = tok.encode(doc);
      dst.insert(dst.end(), ids.begin(), ids.end());
      dst.push_back(tok.eot_token());
      ++report.documents;
      done += doc.size() + o.separator.size() + 2;
      if (o.progress) o.progress(std::min(done, total), total);
    }
  }
  if (train.empty()) return Status::InvalidArgument("prepare: the inputs hold no text");
  ZT_RETURN_IF_ERROR(write_token_file_from_ids(o.train_output, train, o.format, wide));
  report.train_tokens = static_cast<int64_t>(train.size());
  if (!o.val_output.empty()) {
    if (val.empty()) return Status::InvalidArgument("prepare: too few documents for a validation split");
    ZT_RETURN_IF_ERROR(write_token_file_from_ids(o.val_output, val, o.format, wide));
    report.val_tokens = static_cast<int64_t>(val.size());
  }
  return report;
}

}  // namespace zt
