// Single-process checkpoint save/load over safetensors + state.json.
#include "checkpoint/model_checkpoint.h"

#include <sys/stat.h>

#include <vector>

#include "io/atomic_file.h"
#include "io/filesystem.h"

namespace zt {

namespace {

constexpr const char* kFormat = "zerotrain-checkpoint";
constexpr int kVersion = 1;

// Optimizer state tensors sliced per parameter: "<state>.<param name>".
std::vector<TensorToWrite> optimizer_tensors(const ParamTable& table, Optimizer* opt) {
  std::vector<TensorToWrite> out;
  const ElementRange range = opt->range();
  for (const StateTensor& st : opt->state()) {
    for (const TensorSpec& s : table.specs()) {
      if (s.offset < range.begin || s.offset + s.numel > range.end) continue;
      out.push_back({st.name + "." + s.name, DType::kF32, s.shape, st.data + (s.offset - range.begin)});
    }
  }
  return out;
}

}  // namespace

Status save_checkpoint(const std::string& save_dir, const std::string& tag, const ParamTable& table,
                       const float* params, Optimizer* optimizer, const CheckpointState& state) {
  const std::string dir = save_dir + "/" + tag;
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  std::vector<TensorToWrite> model;
  for (const TensorSpec& s : table.specs()) model.push_back({s.name, DType::kF32, s.shape, params + s.offset});
  ZT_RETURN_IF_ERROR(write_safetensors(dir + "/model.safetensors", model, {{"format", "zerotrain"}}));
  Json st = {{"format", kFormat}, {"version", kVersion}, {"step", state.step}, {"config", state.config}};
  if (optimizer != nullptr) {
    ZT_RETURN_IF_ERROR(write_safetensors(dir + "/optimizer.safetensors", optimizer_tensors(table, optimizer)));
    st["optimizer"] = {{"name", optimizer->name()}, {"steps", optimizer->step_count()}};
  }
  ZT_RETURN_IF_ERROR(write_file_atomic(dir + "/state.json", st.dump(2) + "\n"));
  return write_file_atomic(save_dir + "/latest", tag + "\n");
}

StatusOr<std::string> resolve_checkpoint_dir(const std::string& path) {
  struct stat sb {};
  if (::stat((path + "/state.json").c_str(), &sb) == 0) return path;
  auto latest = read_file(path + "/latest");
  if (!latest.ok()) {
    return Status::NotFound(path + " is not a checkpoint: it has neither state.json nor a 'latest' file");
  }
  std::string tag = latest.value();
  while (!tag.empty() && (tag.back() == '\n' || tag.back() == ' ')) tag.pop_back();
  if (tag.empty() || tag.find('/') != std::string::npos) {
    return Status::Corruption(path + "/latest: expected a checkpoint tag, got \"" + tag + "\"");
  }
  return path + "/" + tag;
}

StatusOr<CheckpointState> read_checkpoint_state(const std::string& dir) {
  const std::string file = dir + "/state.json";
  ZT_ASSIGN_OR_RETURN(std::string text, read_file(file));
  auto parsed = parse_json_strict(text, file);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  const Json& j = parsed.value();
  if (!j.is_object() || j.value("format", "") != kFormat) {
    return Status::Corruption(file + ": not a zerotrain checkpoint state (format is not \"" + kFormat + "\")");
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion) {
    return Status::Corruption(file + ": unsupported checkpoint version " + (j.contains("version") ? j["version"].dump() : "(none)"));
  }
  if (!j.contains("step") || !j["step"].is_number_integer() || !j.contains("config") || !j["config"].is_object()) {
    return Status::Corruption(file + ": missing step or config");
  }
  CheckpointState s;
  s.step = j["step"].get<int64_t>();
  s.config = j["config"];
  if (j.contains("optimizer") && j["optimizer"].is_object() && j["optimizer"].contains("steps") &&
      j["optimizer"]["steps"].is_number_integer()) {
    s.optimizer_steps = j["optimizer"]["steps"].get<int64_t>();
  }
  return s;
}

Status load_checkpoint_params(const std::string& dir, const ParamTable& table, float* params) {
  ZT_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::read(dir + "/model.safetensors"));
  for (const TensorSpec& s : table.specs()) ZT_RETURN_IF_ERROR(f.read_f32(s.name, s.shape, params + s.offset));
  if (f.entries().size() != table.specs().size()) {
    for (const auto& [name, e] : f.entries()) {
      if (table.find(name) < 0) return Status::InvalidArgument(f.label() + ": unexpected tensor " + name);
    }
  }
  return Status::OK();
}

Status load_checkpoint_optimizer(const std::string& dir, const ParamTable& table, Optimizer* optimizer,
                                 int64_t optimizer_steps) {
  ZT_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::read(dir + "/optimizer.safetensors"));
  for (const TensorToWrite& t : optimizer_tensors(table, optimizer)) {
    ZT_RETURN_IF_ERROR(f.read_f32(t.name, t.shape, const_cast<float*>(static_cast<const float*>(t.data))));
  }
  optimizer->set_step_count(optimizer_steps);
  return Status::OK();
}

}  // namespace zt
