// Checkpoints end to end through the zerotrain binary, under mpirun:
//  1. Bitwise resume: run A trains N = 6 steps straight; run B is SIGKILLed in the
//     middle of step 5 (a rank kills itself: ZT_TEST_SIGKILL_AT_STEP) after saving at
//     steps 2 and 4, then resumes from `latest`. Per-step losses (hex floats in
//     metrics.csv) and every piece checksum of the final checkpoints (the parameter
//     and optimizer digests) are identical, for ZeRO stages 0-3 at dp 2 and for pp 2.
//  2. Reshard: saved after 3 steps at dp 4 ZeRO-2, resumed at dp 2 ZeRO-3 and at dp 1;
//     saved at tp 2 x pp 2, resumed on one process: steps 4-6 match an uninterrupted
//     single-process run within 1e-5 (relative; float reduction order differs).
//  3. Torn write: the process kills itself after a random number of bytes of the
//     second checkpoint (in its shard, its manifest, or `latest`): `latest` still names
//     the first, and resuming from it reproduces the clean run bit for bit.
//  4. One flipped bit in a shard, the manifest or `latest`: exit 2, naming the file
//     (and tensor) with expected and actual checksums.
//  5. SIGUSR1 to mpirun, SIGTERM to one rank, SIGINT to a single process: every rank
//     checkpoints after the same step and exits 0; the run resumes from it.
//  Mixed precision: 1 also for bf16 (ZeRO-3) and fp16 (ZeRO-2, an overflow on one rank in
//  step 3, the dynamic scale doubling every 2 clean steps), so the scaler's state crosses
//  the kill; 2 also for fp16 from dp 4 ZeRO-2 to dp 2 ZeRO-3, the resumed run starting
//  from the saved scale and its losses within the fp16-vs-fp32 gap of the uninterrupted
//  fp16 run (trainer_precision_test.cc states why a layout change is bounded by it).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/rng.h"
#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::mpirun_prefix;
using testing::read_text;

struct CliResult {
  int code;
  std::string out;
};

struct Layout {
  int np = 1;
  int stage = 0;
  int pp = 1;
  int tp = 1;
  const char* precision = "fp32";
  bool llama = false;  // a grouped-query Llama (4 heads, 2 kv heads, untied head) instead of GPT-2
  const char* optimizer = "AdamW";  // or a 1-bit optimizer (optimizer_json)
};

// The optimizer section of a test config: the 1-bit ones leave their warm-up by step 3, so
// a kill at step 5 lands in the compressed phase with error feedback to keep.
std::string optimizer_json(const std::string& type) {
  if (type == "ZeroOneAdam") {
    return R"({"type": "ZeroOneAdam", "params": {"lr": 3e-3, "weight_decay": 0.1, "var_freeze_step": 2,
               "var_update_scaler": 1, "local_step_scaler": 1, "local_step_clipper": 2}})";
  }
  if (type == "OneBitLamb") return R"({"type": "OneBitLamb", "params": {"lr": 3e-3, "weight_decay": 0.1, "freeze_step": 2}})";
  return R"({"type": "AdamW", "params": {"lr": 3e-3, "weight_decay": 0.1}})";
}

// The precision section of a test config.
std::string precision_json(const std::string& p) {
  if (p == "bf16") return R"("bf16": {"enabled": true},)";
  if (p == "fp16") {
    return R"("fp16": {"enabled": true, "initial_scale_power": 10, "loss_scale_window": 2, "hysteresis": 1},)";
  }
  return "";
}

class CheckpointCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    ASSERT_EQ(run("", testing::kPrepareSmallCorpus).code, 0);
  }

  std::string zerotrain() const { return testing::binary_dir() + "/zerotrain"; }

  // Runs zerotrain (under mpirun when launcher is not empty) in the test directory.
  CliResult run(const std::string& launcher, const std::string& args, const std::string& env = "") {
    CliResult r;
    r.code = testing::run_logged("cd " + dir_ + " && " + env + " OMP_NUM_THREADS=1 " + launcher + zerotrain() + " " + args,
                                 dir_ + "/log", &r.out);
    return r;
  }

  // A config for `layout`, writing to `out`; returns its file name.
  std::string config(const std::string& out, const Layout& l, int steps) {
    const std::string name = out + ".json";
    std::ofstream(dir_ + "/" + name) << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "optimizer": )" << optimizer_json(l.optimizer) << R"(,
      "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 3, "warmup_max_lr": 3e-3}},
      "gradient_clipping": 1.0, "steps_per_print": 1, )" << precision_json(l.precision) << R"(
      "zero_optimization": {"stage": )" << l.stage << R"(, "reduce_bucket_size": 3000, "allgather_bucket_size": 3000,
                            "stage3_param_persistence_threshold": 0},
      "model": )" << (l.llama ? R"({"family": "llama", "num_hidden_layers": 2, "num_attention_heads": 4,
                                   "num_key_value_heads": 2, "hidden_size": 32, "intermediate_size": 48,
                                   "max_position_embeddings": 32})"
                               : R"({"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 32})") << R"(,
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "parallel": {"pp": )" << l.pp << R"(, "tp": )" << l.tp << R"(},
      "training": {"steps": )" << steps << R"(, "eval_interval": 0, "output_dir": ")" << out << R"(",
                   "save_interval": 2}})";
    return name;
  }

  std::string launcher(const Layout& l) const { return l.np > 1 ? mpirun_prefix(l.np) : ""; }

  // step -> loss (from the hex column) of out/metrics.csv.
  std::map<int64_t, double> losses(const std::string& out) { return testing::metrics_losses(dir_ + "/" + out + "/metrics.csv"); }

  // Every piece of a checkpoint as "tensor kind file [begin,end) checksum", sorted: the
  // parameter and optimizer-state digests.
  std::vector<std::string> digests(const std::string& tag_dir) {
    const Json m = Json::parse(read_text(dir_ + "/" + tag_dir + "/manifest.json"));
    std::vector<std::string> out;
    for (const Json& p : m["pieces"]) {
      out.push_back(p["tensor"].get<std::string>() + " " + p["kind"].get<std::string>() + " " +
                    p["file"].get<std::string>() + " " + std::to_string(p["begin"].get<int64_t>()) + " " +
                    std::to_string(p["end"].get<int64_t>()) + " " + p["checksum"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string latest_tag(const std::string& save_dir) {
    const std::string text = read_text(dir_ + "/" + save_dir + "/latest");
    return text.substr(0, text.find('\n'));
  }

};

class BitwiseResume : public CheckpointCli, public ::testing::WithParamInterface<Layout> {};

TEST_P(BitwiseResume, KilledMidStepResumesBitForBit) {
  const Layout l = GetParam();
  const bool fp16 = std::string(l.precision) == "fp16";
  const std::string overflow = fp16 ? "ZT_TEST_OVERFLOW_AT_STEP=3:1 " : "";
  CliResult a = run(launcher(l), "train --config " + config("a", l, 6), overflow);
  ASSERT_EQ(a.code, 0) << a.out;
  if (fp16) {
    EXPECT_NE(a.out.find("step 3: fp16 gradient overflow"), std::string::npos) << a.out;
  }
  const std::string cb = config("b", l, 6);
  CliResult b = run(launcher(l), "train --config " + cb, overflow + "ZT_TEST_SIGKILL_AT_STEP=5:" + std::to_string(l.np - 1));
  ASSERT_NE(b.code, 0) << "the kill hook did not fire:\n" << b.out;
  EXPECT_EQ(b.out.find("step 5/6"), std::string::npos) << "step 5 completed before the kill";
  ASSERT_EQ(latest_tag("b/checkpoints"), "global_step4");
  b = run(launcher(l), "train --config " + cb + " --resume b/checkpoints", overflow);
  ASSERT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.out.find("resumed from b/checkpoints/global_step4 at step 4"), std::string::npos) << b.out;
  const auto la = losses("a"), lb = losses("b");
  ASSERT_EQ(la.size(), 6u);
  ASSERT_EQ(lb.size(), 6u) << read_text(dir_ + "/b/metrics.csv");
  for (const auto& [step, loss] : la) EXPECT_EQ(lb.at(step), loss) << "step " << step << ": losses differ";
  const auto da = digests("a/checkpoints/global_step6"), db = digests("b/checkpoints/global_step6");
  ASSERT_FALSE(da.empty());
  EXPECT_EQ(da, db) << "final parameter/optimizer digests differ";
  std::printf("  %s np %d stage %d pp %d: 6 losses identical (last %a), %zu piece digests identical\n", l.precision,
              l.np, l.stage, l.pp, la.at(6), da.size());
}

INSTANTIATE_TEST_SUITE_P(Layouts, BitwiseResume,
                         ::testing::Values(Layout{2, 0, 1, 1}, Layout{2, 1, 1, 1}, Layout{2, 2, 1, 1}, Layout{2, 3, 1, 1},
                                           Layout{2, 0, 2, 1}, Layout{2, 3, 1, 1, "bf16"}, Layout{2, 2, 1, 1, "fp16"},
                                           Layout{2, 3, 1, 1, "fp32", true}, Layout{2, 0, 1, 2, "bf16", true},
                                           Layout{2, 0, 1, 1, "fp16", false, "ZeroOneAdam"},
                                           Layout{2, 0, 1, 1, "fp32", false, "OneBitLamb"}),
                         [](const auto& info) {
                           const std::string opt = info.param.optimizer;
                           return (opt == "AdamW" ? "" : opt + "_") + std::string(info.param.llama ? "llama_" : "") +
                                  info.param.precision + "_np" +
                                  std::to_string(info.param.np) + "_stage" + std::to_string(info.param.stage) + "_pp" +
                                  std::to_string(info.param.pp) + (info.param.tp > 1 ? "_tp2" : "");
                         });

TEST_F(CheckpointCli, ReshardedResumeContinuesTheRun) {
  ASSERT_EQ(run("", "train --config " + config("ref", Layout{}, 6)).code, 0);
  ASSERT_EQ(run("", "train --config " + config("ref_llama", Layout{1, 0, 1, 1, "fp32", true}, 6)).code, 0);
  const auto ref_gpt = losses("ref"), ref_llama = losses("ref_llama");
  struct Case {
    Layout save, load;
    const char* what;
  };
  const Case cases[] = {{{4, 2, 1, 1}, {2, 3, 1, 1}, "dp 4 ZeRO-2 -> dp 2 ZeRO-3"},
                        {{4, 2, 1, 1}, {1, 0, 1, 1}, "dp 4 ZeRO-2 -> dp 1"},
                        {{4, 0, 2, 2}, {1, 0, 1, 1}, "tp 2 x pp 2 -> one process"},
                        {{4, 0, 2, 2, "fp32", true}, {2, 3, 1, 1, "fp32", true}, "llama tp 2 x pp 2 -> dp 2 ZeRO-3"}};
  for (const Case& c : cases) {
    const auto& ref = c.save.llama ? ref_llama : ref_gpt;
    const std::string s = std::string(c.save.llama ? "l" : "s") + std::to_string(c.save.np) + "_" +
                          std::to_string(c.save.tp);
    if (!std::filesystem::exists(dir_ + "/" + s)) {
      const CliResult saved = run(launcher(c.save), "train --config " + config(s, c.save, 3));
      ASSERT_EQ(saved.code, 0) << c.what << "\n" << saved.out;
    }
    const std::string r = "r" + std::to_string(&c - cases);
    const CliResult resumed = run(launcher(c.load), "train --config " + config(r, c.load, 6) + " --resume " + s + "/checkpoints");
    ASSERT_EQ(resumed.code, 0) << c.what << "\n" << resumed.out;
    EXPECT_NE(resumed.out.find("note: resharded from"), std::string::npos) << resumed.out;
    const auto got = losses(r);
    ASSERT_EQ(got.size(), 3u) << c.what;
    double worst = 0.0;
    for (const auto& [step, loss] : got) worst = std::max(worst, std::fabs(loss - ref.at(step)) / ref.at(step));
    EXPECT_LE(worst, 1e-5) << c.what;
    std::printf("  %-28s steps 4-6 max rel loss diff vs uninterrupted %.2e\n", c.what, worst);
  }
}

TEST_F(CheckpointCli, Fp16ReshardKeepsTheScalerState) {
  const Layout single{1, 0, 1, 1, "fp16"}, save{4, 2, 1, 1, "fp16"}, load{2, 3, 1, 1, "fp16"};
  ASSERT_EQ(run("", "train --config " + config("ref16", single, 6)).code, 0);
  ASSERT_EQ(run("", "train --config " + config("ref32", Layout{}, 6)).code, 0);
  const auto ref16 = losses("ref16"), ref32 = losses("ref32");
  const CliResult saved = run(launcher(save), "train --config " + config("s16", save, 3));
  ASSERT_EQ(saved.code, 0) << saved.out;
  const Json m = Json::parse(read_text(dir_ + "/s16/checkpoints/global_step3/manifest.json"));
  ASSERT_EQ(m["engine"]["loss_scaler"]["type"], "dynamic");
  const double scale = m["engine"]["loss_scaler"]["cur_scale"].get<double>();
  EXPECT_EQ(scale, 2048.0) << "2^10, doubled after 2 clean steps";
  const CliResult resumed = run(launcher(load), "train --config " + config("r16", load, 6) + " --resume s16/checkpoints");
  ASSERT_EQ(resumed.code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("note: resharded from"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("fp16 loss scale: dynamic, now 2048"), std::string::npos) << resumed.out;
  const auto got = losses("r16");
  ASSERT_EQ(got.size(), 3u);
  double gap = 0.0, worst = 0.0;
  for (const auto& [step, loss] : ref16) gap = std::max(gap, std::fabs(loss - ref32.at(step)) / ref32.at(step));
  for (const auto& [step, loss] : got) worst = std::max(worst, std::fabs(loss - ref16.at(step)) / ref16.at(step));
  EXPECT_LE(worst, gap);
  std::printf("  fp16 dp 4 ZeRO-2 -> dp 2 ZeRO-3: scale %g kept; steps 4-6 max rel loss diff %.2e (fp16-vs-fp32 gap "
              "%.2e)\n", scale, worst, gap);
}

TEST_F(CheckpointCli, TornWriteLeavesThePreviousCheckpointCurrent) {
  ASSERT_EQ(run("", "train --config " + config("clean", Layout{}, 6)).code, 0);
  const auto clean = losses("clean");
  const std::string tag2 = dir_ + "/clean/checkpoints/global_step2";
  // Bytes written per checkpoint, in order: the shard, the manifest, latest (rank 0 alone).
  const size_t shard = std::filesystem::file_size(tag2 + "/rank_00000.safetensors");
  const size_t manifest = std::filesystem::file_size(tag2 + "/manifest.json");
  const size_t latest = std::filesystem::file_size(dir_ + "/clean/checkpoints/latest");
  const size_t first = shard + manifest + latest;
  Rng rng(77);
  const size_t cuts[] = {first + rng.below(shard), first + shard + rng.below(manifest),
                         first + shard + manifest + rng.below(latest)};
  for (size_t cut : cuts) {
    std::filesystem::remove_all(dir_ + "/torn");
    const std::string cfg = config("torn", Layout{}, 6);
    const CliResult torn = run("", "train --config " + cfg, "ZT_TEST_ABORT_AFTER_BYTES=" + std::to_string(cut));
    ASSERT_NE(torn.code, 0) << "the torn-write hook did not fire at byte " << cut;
    EXPECT_EQ(latest_tag("torn/checkpoints"), "global_step2") << "cut at byte " << cut;
    bool tmp = false;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ + "/torn/checkpoints")) {
      tmp |= e.path().filename().string().find(".tmp.") != std::string::npos;
    }
    EXPECT_TRUE(tmp) << "no partial file left at byte " << cut;
    const CliResult resumed = run("", "train --config " + cfg + " --resume torn/checkpoints");
    ASSERT_EQ(resumed.code, 0) << resumed.out;
    const auto got = losses("torn");
    ASSERT_EQ(got.size(), 6u);
    for (const auto& [step, loss] : got) EXPECT_EQ(loss, clean.at(step)) << "cut " << cut << " step " << step;
    std::printf("  cut after %zu bytes (checkpoint 2 spans %zu..%zu): latest stayed global_step2, resume bitwise\n", cut,
                first, 2 * first);
  }
}

void flip_bit(const std::string& path, size_t byte, int bit) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(byte));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(byte));
  f.put(static_cast<char>(c ^ (1 << bit)));
}

TEST_F(CheckpointCli, FlippedBitIsRefusedNamingFileTensorAndChecksums) {
  const Layout dp2{2, 1, 1, 1};
  ASSERT_EQ(run(mpirun_prefix(2), "train --config " + config("good", dp2, 2)).code, 0);
  const std::string cfg = config("load", Layout{}, 4);
  struct Case {
    std::string file;
    size_t byte;
    const char* must_name;
  };
  const std::string shard = "global_step2/rank_00001.safetensors";
  const size_t data_end = std::filesystem::file_size(dir_ + "/good/checkpoints/" + shard);
  const Case cases[] = {{shard, data_end - 5, ": tensor "}, {"global_step2/manifest.json", 200, "manifest.json"},
                        {"latest", 3, "latest"}};
  for (const Case& c : cases) {
    std::filesystem::remove_all(dir_ + "/bad");
    std::filesystem::copy(dir_ + "/good", dir_ + "/bad", std::filesystem::copy_options::recursive);
    flip_bit(dir_ + "/bad/checkpoints/" + c.file, c.byte, 2);
    const CliResult r = run("", "train --config " + cfg + " --resume bad/checkpoints");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("bad/checkpoints/" + c.file), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.must_name), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("expected "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("actual "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("step 3/"), std::string::npos) << "trained on a damaged checkpoint";
    std::printf("  %s", r.out.c_str());
  }
}

TEST_F(CheckpointCli, InitStartsFromExportedOrCheckpointWeights) {
  ASSERT_EQ(run("", "train --config " + config("base", Layout{}, 4)).code, 0);
  ASSERT_EQ(run("", "export base/checkpoints -o hf").code, 0);
  const std::string cfg = config("init", Layout{}, 2);
  CliResult r = run("", "train --config " + cfg + " --init hf");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("initialised from HuggingFace weights hf"), std::string::npos) << r.out;
  // Trained weights, a fresh optimizer: the first loss is the trained model's, far below a fresh model's.
  const double fresh = losses("base").at(1), from_hf = losses("init").at(1);
  EXPECT_LT(from_hf, fresh - 0.2) << from_hf << " vs " << fresh;
  std::filesystem::remove_all(dir_ + "/init");
  r = run("", "train --config " + cfg + " --init base/checkpoints");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("optimizer and step start fresh"), std::string::npos) << r.out;
  EXPECT_EQ(losses("init").at(1), from_hf) << "the same weights from the checkpoint and from the export";
  r = run("", "train --config " + cfg + " --init hf --resume base/checkpoints");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--resume and --init exclude each other"), std::string::npos) << r.out;
}

// Starts `command` in the background (sh -c 'exec ...'); returns its pid.
pid_t spawn(const std::string& command) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool wait_for_text(const std::string& path, const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (read_text(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST_F(CheckpointCli, StopSignalCheckpointsEveryRankAndExitsZero) {
  struct Case {
    const char* what;
    int np;
  };
  for (const Case c : {Case{"SIGUSR1 to mpirun", 2}, Case{"SIGTERM to one rank", 2}, Case{"SIGINT to one process", 1}}) {
    std::filesystem::remove_all(dir_ + "/sig");
    const std::string cfg = config("sig", Layout{c.np, 1, 1, 1}, 100000);
    const std::string log = dir_ + "/sig.log";
    std::filesystem::remove(log);
    const std::string env = "env OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
    const std::string mpi = c.np > 1 ? "mpirun --oversubscribe --mca btl self,vader -np 2 " : "";
    const pid_t pid = spawn("sh -c 'cd " + dir_ + " && exec " + env + mpi + zerotrain() + " train --config " + cfg +
                            " > " + log + " 2>&1'");
    ASSERT_TRUE(wait_for_text(log, "step 3/", 60)) << c.what << "\n" << read_text(log);
    // Signals go to this test's processes only (other tests may run beside it): pid is
    // mpirun (or the lone zerotrain) itself, the ranks are its children.
    if (std::string(c.what) == "SIGTERM to one rank") {
      ASSERT_EQ(std::system(("pkill -TERM -n -x zerotrain -P " + std::to_string(pid)).c_str()), 0);
    } else {
      ASSERT_EQ(::kill(pid, c.np > 1 ? SIGUSR1 : SIGINT), 0);
    }
    const int code = wait_exit(pid);
    const std::string text = read_text(log);
    EXPECT_EQ(code, 0) << c.what << "\n" << text;
    EXPECT_NE(text.find("stopped by signal after step"), std::string::npos) << c.what << "\n" << text;
    const std::string tag = latest_tag("sig/checkpoints");
    EXPECT_EQ(tag.rfind("global_step", 0), 0u) << c.what;
    EXPECT_NE(text.find("saved checkpoint sig/checkpoints/" + tag), std::string::npos) << c.what << "\n" << text;
    const int64_t step = std::atoll(tag.c_str() + 11);
    const CliResult resumed = run(launcher(Layout{c.np}), "train --config " + cfg + " --set training.steps=" +
                                                               std::to_string(step + 1) + " --resume sig/checkpoints");
    EXPECT_EQ(resumed.code, 0) << resumed.out;
    EXPECT_NE(resumed.out.find("resumed from sig/checkpoints/" + tag + " at step " + std::to_string(step)), std::string::npos)
        << resumed.out;
    std::printf("  %-24s exit %d, every rank checkpointed %s, resumed from it\n", c.what, code, tag.c_str());
  }
}

}  // namespace
}  // namespace zt
