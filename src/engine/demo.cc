// Demo configuration and corpus preparation.
#include "engine/demo.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "data/prepare.h"
#include "io/filesystem.h"

namespace zt {

const char* demo_config_text() {
  return R"({
  "train_micro_batch_size_per_gpu": 16,
  "gradient_accumulation_steps": 1,
  "optimizer": {"type": "AdamW", "params": {"lr": 2e-3, "betas": [0.9, 0.95], "weight_decay": 0.1}},
  "scheduler": {"type": "WarmupCosineLR",
                "params": {"total_num_steps": 450, "warmup_num_steps": 30, "warmup_type": "linear",
                           "cos_min_ratio": 0.1}},
  "gradient_clipping": 1.0,
  "model": {"n_layer": 4, "n_head": 4, "n_embd": 256, "n_positions": 128},
  "data": {"tokenizer": "byte", "seq_len": 128},
  "training": {"steps": 450, "eval_interval": 75, "eval_batches": 16, "output_dir": "out/demo",
               "sample_tokens": 400, "sample_prompt": "Q: ", "seed": 1234}
})";
}

std::string demo_corpus_dir() {
  const char* env = std::getenv("ZT_DEMO_CORPUS");
  return env != nullptr ? env : "/usr/share/games/fortunes";
}

// Plain fortune files: regular files without the strfile index (.dat) or UTF-8 aliases (.u8).
static std::vector<std::string> fortune_files(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const bool index_or_alias =
        name.size() > 4 && (name.substr(name.size() - 4) == ".dat" || name.substr(name.size() - 3) == ".u8");
    if (name[0] == '.' || index_or_alias) {
      continue;
    }
    struct stat st {};
    const std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(path);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

Status prepare_demo_data(ZtConfig* config, const Tokenizer& tokenizer, bool write) {
  if (!config->data.train.empty()) return Status::OK();
  const std::string dir = config->training.output_dir + "/data";
  const std::string train = dir + "/fortunes_" + tokenizer.name() + "_train.bin";
  const std::string val = dir + "/fortunes_" + tokenizer.name() + "_val.bin";
  config->data.train = {train};
  config->data.val = {val};
  if (!write || (file_exists(train) && file_exists(val))) return Status::OK();
  const std::vector<std::string> inputs = fortune_files(demo_corpus_dir());
  if (inputs.empty()) {
    return Status::NotFound("the demo corpus comes from Debian's fortunes package, but " + demo_corpus_dir() +
                            " has no fortune files: apt-get install fortunes");
  }
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  PrepareOptions o;
  o.inputs = inputs;
  o.separator = "%";
  o.train_output = train;
  o.val_output = val;
  o.val_fraction = 0.1;
  ZT_ASSIGN_OR_RETURN(PrepareReport r, prepare_corpus(o, tokenizer));
  std::printf("demo corpus: %lld fortunes (%.1f MB of text from %s) -> %lld train / %lld val %s tokens in %s\n",
              static_cast<long long>(r.documents), r.bytes / 1e6, demo_corpus_dir().c_str(),
              static_cast<long long>(r.train_tokens), static_cast<long long>(r.val_tokens), tokenizer.name(),
              dir.c_str());
  return Status::OK();
}

}  // namespace zt
