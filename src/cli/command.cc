// What the sub-commands share; see command.h.
#include "cli/command.h"

#include <CLI/CLI.hpp>

namespace zt {

const CLI::Validator& tokenizer_validator() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        if (s == "gpt2" || s == "byte" || s.ends_with(".model") || s.ends_with(".json")) return "";
        return "expected gpt2, byte, or a path ending in .model (SentencePiece) or .json (tokenizer.json)";
      },
      "TOKENIZER");
  return v;
}

}  // namespace zt
