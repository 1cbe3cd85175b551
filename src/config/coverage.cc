// The coverage document (coverage.h): probe parses, then one markdown table per kind.
#include "config/coverage.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "config/config.h"
#include "config/key_tables.h"
#include "io/json_reader.h"

namespace zt {

namespace {

// Configs that open every section the readers know, once per optimizer and schedule type.
std::vector<Json> probes() {
  const std::vector<std::string> optimizers = {"AdamW", "SGD", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb"};
  const std::vector<std::string> schedules = {"WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle"};
  std::vector<Json> out;
  for (size_t i = 0; i < std::max(optimizers.size(), schedules.size()); ++i) {
    Json j = {{"optimizer", {{"type", optimizers[i % optimizers.size()]}, {"params", Json::object()}}},
              {"scheduler", {{"type", schedules[i % schedules.size()]}, {"params", Json::object()}}},
              {"zero_optimization", {{"offload_optimizer", Json::object()}, {"offload_param", Json::object()}}},
              {"checkpoint", Json::object()},
              {"pipeline", Json::object()},
              {"tensor_parallel", Json::object()},
              {"communication_data_type", "fp32"},
              {"sequence_parallel_size", 1},
              {"data_types", {{"grad_accum_dtype", "fp32"}}},
              {"curriculum_learning", {{"schedule_config", Json::object()}}},
              {"progressive_layer_drop", Json::object()},
              {"autotuning", Json::object()},
              {"eigenvalue", Json::object()},
              {"compression_training",
               {{"weight_quantization", {{"shared_parameters", {{"fp16_mixed_quantize", Json::object()}}},
                                         {"different_groups", {{"wq1", {{"params", Json::object()}}}}}}},
                {"activation_quantization", {{"different_groups", {{"aq1", {{"params", Json::object()}}}}}}},
                {"sparse_pruning", {{"different_groups", {{"sp1", {{"params", Json::object()}}}}}}},
                {"row_pruning", Json::object()}, {"head_pruning", Json::object()}, {"channel_pruning", Json::object()},
                {"layer_reduction", Json::object()}}},
              {"data_efficiency",
               {{"data_sampling", {{"curriculum_learning", {{"curriculum_metrics", {{"seqlen_truncate", Json::object()}}}}}}},
                {"data_routing", {{"random_ltd", {{"random_ltd_layer_id", Json::array()},
                                                  {"layer_token_lr_schedule", Json::object()}}}}}}}};
    for (const char* s : {"fp16", "bf16", "aio", "tensorboard", "csv_monitor", "comms_logger",
                          "flops_profiler", "activation_checkpointing", "model", "data", "training", "parallel",
                          "parameter_server"}) {
      j[s] = Json::object();
    }
    out.push_back(std::move(j));
  }
  return out;
}

// Every key read, first occurrence order, merged by pointer (a typed getter's entry
// wins over a hand-checked read of the same key).
std::vector<KeyLogEntry> read_keys() {
  std::vector<KeyLogEntry> log;
  {
    ScopedKeyLog scope(&log);
    for (const Json& p : probes()) (void)parse_config(p, AutoContext{});
  }
  std::vector<KeyLogEntry> out;
  std::map<std::string, size_t> at;
  for (KeyLogEntry& e : log) {
    auto it = at.find(e.pointer);
    if (it == at.end()) {
      at[e.pointer] = out.size();
      out.push_back(std::move(e));
    } else if (out[it->second].expects == "a value checked by its section reader" && e.expects != "a value checked by its section reader") {
      out[it->second] = std::move(e);
    }
  }
  return out;
}

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + s + "`"; }

std::string keys_table(const std::vector<KeyLogEntry>& keys) {
  std::map<std::string, std::string> note;
  for (const InertKey& k : inert_keys()) note[k.pointer] = std::string("no effect here: ") + k.why;
  for (const AutoRule& r : auto_rules()) {
    note[r.pointer] += std::string(note[r.pointer].empty() ? "" : "; ") + "\"auto\": " + r.resolves_to;
  }
  for (const RefusedKey& r : refused_values()) {
    note[r.pointer] += std::string(note[r.pointer].empty() ? "" : "; ") + "refused, " + refusal_text(r);
  }
  std::string md = "| key | expects | default | notes |\n|---|---|---|---|\n";
  for (const KeyLogEntry& k : keys) {
    const bool refused_section = [&] {
      for (const RefusedKey& r : refused_sections()) {
        if (k.pointer == r.pointer) return true;
      }
      return false;
    }();
    if (refused_section) continue;  // listed with the refusals
    md += "| " + code(k.pointer) + " | " + cell(k.expects) + " | " + code(cell(k.default_value)) + " | " +
          cell(note[k.pointer]) + " |\n";
  }
  return md;
}

std::string tables_md() {
  std::string md = "## Names mapped to their modern keys\n\nEach mapping prints one line in the banner.\n\n"
                   "| given | becomes | why |\n|---|---|---|\n";
  md += "| `/zero_optimization` (true/false) | `/zero_optimization/stage` (1/0) | DeepSpeed's deprecated boolean form |\n";
  for (const KeyAlias& a : key_aliases()) md += "| " + code(a.from) + " | " + code(a.to) + " | " + cell(a.note) + " |\n";
  md += "| `/communication_data_type` = `\"bfp16\"` | `\"bf16\"` | DeepSpeed's old spelling |\n";
  md += "\n## \"auto\" values\n\nHuggingFace's convention, resolved as its DeepSpeed integration does, from what "
        "zerotrain knows. The banner prints every resolved value with its pointer; `zerotrain train --print-config` "
        "and `zerotrain estimate --print-config` print the whole resolved config. \"auto\" anywhere else is an "
        "error naming the key.\n\n| key | resolves to |\n|---|---|\n";
  for (const AutoRule& r : auto_rules()) md += "| " + code(r.pointer) + " | " + cell(r.resolves_to) + " |\n";
  md += "\n## Refused sections\n\nAccepted only when absent or `{\"enabled\": false}`.\n\n"
        "| section | kind | why | instead |\n|---|---|---|---|\n";
  for (const RefusedKey& r : refused_sections()) {
    md += "| " + code(r.pointer) + " | " + refusal_kind_name(r.kind) + " | " + cell(r.why) + " | " + cell(r.instead) +
          " |\n";
  }
  md += "\n## Refused values\n\n| key | kind | why | instead |\n|---|---|---|---|\n";
  for (const RefusedKey& r : refused_values()) {
    md += "| " + code(r.pointer) + " | " + refusal_kind_name(r.kind) + " | " + cell(r.why) + " | " + cell(r.instead) +
          " |\n";
  }
  return md;
}

}  // namespace

StatusOr<std::string> config_coverage_markdown() {
  const std::vector<KeyLogEntry> keys = read_keys();
  std::set<std::string> read;
  for (const KeyLogEntry& k : keys) read.insert(k.pointer);
  std::vector<std::string> named;
  for (const KeyAlias& a : key_aliases()) named.push_back(a.to);
  for (const AutoRule& r : auto_rules()) named.push_back(r.pointer);
  for (const InertKey& k : inert_keys()) named.push_back(k.pointer);
  for (const RefusedKey& r : refused_values()) named.push_back(r.pointer);
  for (const RefusedKey& r : refused_sections()) named.push_back(r.pointer);
  auto in_refused_section = [](const std::string& p) {  // such sections are read whole (refuse_unless_disabled)
    for (const RefusedKey& r : refused_sections()) {
      if (p.rfind(std::string(r.pointer) + "/", 0) == 0) return true;
    }
    return false;
  };
  for (const std::string& p : named) {
    if (!read.count(p) && !in_refused_section(p)) return Status::Internal("config/key_tables.cc names " + p + ", which no section reader reads");
  }
  std::string md =
      "# DeepSpeed config coverage\n\n"
      "Generated by `zerotrain config-coverage` from the parser itself (the keys its readers read while parsing "
      "probe configs that open every section) and from its tables in `src/config/key_tables.cc`. The test "
      "`ConfigCoverage.DocumentMatchesParser` fails when this file differs, so it cannot drift. Any key not listed "
      "is refused as unknown, naming its JSON pointer and the keys allowed there.\n\n"
      "## Keys read\n\n" + std::to_string(keys.size()) + " keys. Notes say which are accepted with no effect here "
      "(and why), which may be \"auto\", and which values are refused.\n\n";
  return md + keys_table(keys) + "\n" + tables_md();
}

}  // namespace zt
