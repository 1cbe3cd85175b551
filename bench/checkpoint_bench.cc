// Times a full checkpoint of GPT-2 small with AdamW (124 M parameters: weights and both
// moments, 1.49 GB) saved and loaded by zerotrain (one process: shard written atomically
// with per-piece and per-file XXH3, manifest, latest; load verifies every checksum, then
// reshards into the trainer), against the machine's own bound measured in the same
// process: one write_file_atomic of a buffer of the same size (write + fsync + rename +
// directory fsync), and mapping it back with one checksum pass over every byte (the least
// a verified load does; zerotrain's load also checksums every piece and copies the bytes
// into the trainer's arenas). One JSON line with medians.
//   checkpoint_bench [--dir D] [--reps R] [--threads P]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "io/checksum.h"
#include "checkpoint/sharded_load.h"
#include "core/timer.h"
#include "engine/trainer_checkpoint.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "core/threads.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

uint64_t dir_bytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

// Maps a file and checksums every byte once: the least a verified load must do.
void raw_read(const std::string& path) {
  auto map = zt::MappedFile::open(path);
  if (!map.ok() || zt::checksum64(map->data(), map->size()) == 42) {
    std::fprintf(stderr, "checkpoint_bench: cannot map %s\n", path.c_str());
    std::exit(1);
  }
}

void check(const zt::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", s.to_string().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp/zt_checkpoint_bench";
  int reps = 3, threads = 2;
  CLI::App app{"checkpoint_bench: times checkpoint save and load"};
  app.add_option("--dir", dir);
  app.add_option("--reps", reps);
  app.add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::set_num_threads(threads);
  zt::TrainerOptions o;
  o.model = zt::GptConfig::gpt2_small();
  o.micro_batch = 1;
  o.seq_len = 8;
  auto trainer = zt::Trainer::create(o);
  check(trainer.status());
  zt::Trainer& t = *trainer.value();
  auto view = t.checkpoint_view();
  check(view.status());
  for (const zt::StateArray& a : view->arrays) {  // touch the moments: nonzero, like a real run
    for (size_t i = 0; i < a.held.size(); ++i) a.data[i] += 1e-7f * static_cast<float>(i % 1013);
  }
  check(t.close_checkpoint_view(/*written=*/true));
  std::filesystem::remove_all(dir);
  const std::string save_dir = dir + "/ckpt";
  check(zt::save_trainer(t, {save_dir, "", 0, zt::Json::object()}));  // warm-up; sizes the bound's buffer
  const uint64_t bytes = dir_bytes(save_dir);
  std::filesystem::remove_all(save_dir);
  std::vector<char> buf(bytes, 1);
  std::vector<double> save_s, load_s, write_s, read_s;
  for (int r = 0; r < reps; ++r) {
    // The bound first, under the same conditions: the same bytes written durably, then
    // mapped and checksummed.
    zt::Stopwatch sw;
    check(zt::write_file_atomic(dir + "/raw.bin", std::string_view(buf.data(), buf.size())));
    write_s.push_back(sw.seconds());
    sw.restart();
    raw_read(dir + "/raw.bin");
    read_s.push_back(sw.seconds());
    std::filesystem::remove(dir + "/raw.bin");
    sw.restart();
    check(zt::save_trainer(t, {save_dir, "", 0, zt::Json::object()}));
    save_s.push_back(sw.seconds());
    sw.restart();
    auto ckpt = zt::open_checkpoint(save_dir);
    check(ckpt.status());
    check(zt::load_trainer(t, ckpt.value(), false).status());
    load_s.push_back(sw.seconds());
    std::filesystem::remove_all(save_dir);
  }
  std::filesystem::remove_all(dir);
  const double sm = median(save_s), lm = median(load_s), wm = median(write_s), rm = median(read_s);
  std::printf(
      "{\"impl\": \"zerotrain\", \"bytes\": %llu, \"save_ms\": %.1f, \"load_ms\": %.1f, \"raw_write_ms\": %.1f, "
      "\"raw_read_ms\": %.1f, \"save_gbs\": %.3f, \"load_gbs\": %.3f, \"raw_write_gbs\": %.3f, \"raw_read_gbs\": %.3f}\n",
      static_cast<unsigned long long>(bytes), 1e3 * sm, 1e3 * lm, 1e3 * wm, 1e3 * rm, bytes / sm / 1e9, bytes / lm / 1e9,
      bytes / wm / 1e9, bytes / rm / 1e9);
  return 0;
}
