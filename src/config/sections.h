// Section parsers used by parse_config (config.cc): each reads one part of the file
// through a JsonReader and fills its part of ZtConfig. Internal to config/.
#pragma once

#include "config/config.h"
#include "io/json_reader.h"

namespace zt::config_sections {

// DeepSpeed's own vocabulary (ds_sections.cc).
void parse_batch(JsonReader& root, BatchConfig* batch);
void parse_optimizer(JsonReader& root, ZtConfig* c);
void parse_scheduler(JsonReader& root, ZtConfig* c);
void parse_zero(JsonReader& root, ZeroOptions* zero);
void parse_precision(JsonReader& root, PrecisionConfig* p);
// DeepSpeed's monitors: "tensorboard" and "csv_monitor" (monitor/config.py).
void parse_monitors(JsonReader& root, MonitorConfig* tensorboard, MonitorConfig* csv);
// DeepSpeed's "comms_logger" and "flops_profiler" blocks.
void parse_profilers(JsonReader& root, CommsLoggerConfig* comms, FlopsProfilerConfig* flops);
// DeepSpeed's "aio" block (NVMe offload I/O).
void parse_aio(JsonReader& root, AioConfig* a);
void parse_activation_checkpointing(JsonReader& root, ActivationCheckpointConfig* a);
// Top-level scalars and the sections for features zerotrain does not have.
void parse_misc(JsonReader& root, ZtConfig* c);
// Fails `key` with its refusal from key_tables.h (refused_values).
void refuse(JsonReader& r, const std::string& key);
// DeepSpeed's training-efficiency sections (efficiency_sections.cc): curriculum_learning,
// data_efficiency, progressive_layer_drop; banner notes for what each does here.
void parse_efficiency(JsonReader& root, EfficiencyOptions* e, std::vector<std::string>* notes);
void parse_data_efficiency(JsonReader& root, EfficiencyOptions* e, std::vector<std::string>* notes);  // data_efficiency_section.cc
// autotuning (autotuning_section.cc): the block, and the tuning space taken out of the
// config's list values before the other readers see it.
void parse_autotuning(JsonReader& root, AutotuningConfig* a);
Status extract_tuning_space(Json* root, AutotuningConfig* a, std::vector<std::string>* notes);
// compression_training (compression_section.cc).
void parse_compression(JsonReader& root, CompressionOptions* c);
// min/max_difficulty, schedule_type and schedule_config of one curriculum (either form).
CurriculumOptions read_curriculum_schedule(JsonReader& r, std::vector<std::string>* notes);

// zerotrain's sections (zt_sections.cc).
// ep_size: model.moe.ep_size (expert parallelism, DeepSpeed's MoE layer argument) when given.
void parse_model(JsonReader& root, const std::string& tokenizer, GptConfig* model, int* ep_size = nullptr);
// The model section's MoE keys (model_moe_keys.cc).
void parse_moe_keys(JsonReader& model, GptConfig* m, int* ep_size);
void parse_data(JsonReader& root, DataConfig* data);
void parse_training(JsonReader& root, TrainingConfig* training);
void parse_parallel(JsonReader& root, ParallelConfig* parallel);
void parse_parameter_server(JsonReader& root, ParameterServerConfig* ps);  // ps_section.cc

}  // namespace zt::config_sections
