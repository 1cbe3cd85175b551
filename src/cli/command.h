// A sub-command of the zerotrain binary: each command's file registers its own flags on the
// app (add_*_command) and returns how to run it once parsed. main() only parses and
// dispatches. Commands that touch the compute backend ask main() to check ZT_ISA and
// ZT_GEMM before they run, so a bad value stops before any work.
// Thread-safety: main's thread.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace zt {

struct Command {
  CLI::App* app = nullptr;  // the sub-command, owned by the parent app
  std::function<int()> run;
  bool needs_backend = true;
};

// --tokenizer's check: gpt2, byte, or a path ending in .model (SentencePiece) or .json.
const CLI::Validator& tokenizer_validator();

}  // namespace zt
