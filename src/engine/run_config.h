// From a configuration JSON to what the training commands (train, estimate) build: the
// resolved configuration for a world size, the Trainer's options, and the pipeline
// partition method. Errors are the user's input (a JSON pointer and the allowed values).
#pragma once

#include "config/config.h"
#include "core/status.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"

namespace zt {

// What the configuration is loaded for: training opens the device; planning (estimate,
// plan) describes a "cuda" run without opening a GPU (backend/planned_device.h), and
// accepts what CUDA runs have built but not yet run on a GPU (offload).
enum class RunPurpose { kTrain, kPlan };

// Parses and validates the configuration, resolves the parallel degrees for `world`
// ranks, pads the vocabulary for tensor parallelism and resolves the batch triple.
StatusOr<ZtConfig> load_run_config(const Json& root, int world, RunPurpose purpose = RunPurpose::kTrain);

// training.device ("cpu", "cuda", "auto") as c->device: cuda needs a usable GPU and a
// configuration CUDA runs support (one rank, no 1-bit optimizer; offload once its GPU
// test has run), else the reason names the key; "auto" falls back to cpu with a note
// saying why. To plan, "cuda" is described without a GPU ("auto" resolves as to train).
Status resolve_device(ZtConfig* c, int world, RunPurpose purpose = RunPurpose::kTrain);

// Prints what the aliases and "auto" changed ("config: <pointer>: ..."), one line each.
void print_config_notes(const ZtConfig& c);
// --print-config: the resolved configuration as indented JSON on stdout.
void print_resolved_config(const ZtConfig& c);

// The model, batch shape, optimizer, schedule, clipping and seed of a resolved configuration.
GptTrainingOptions gpt_training_options(const ZtConfig& cfg);
// The Trainer's options for a resolved configuration (the layout is set per rank).
TrainerOptions trainer_options(const ZtConfig& c);
// The backend of the resolved device and precision (a planned device's description for
// estimate and plan). REQUIRES: c came from load_run_config.
const Backend& run_backend(const ZtConfig& c);

// parallel.partition_method as the pipeline partition.
StagePartition stage_partition(const ZtConfig& c);

}  // namespace zt
