// zerotrain: the command-line entry point. Sub-commands: train, estimate (memory per rank before a
// run), prepare, sample, eval, export, import, doctor (the machine report, like DeepSpeed's ds_report),
// report (an HTML page of runs).
#include <CLI/CLI.hpp>

#include "backend/backend.h"
#include "cli/checkpoint_commands.h"
#include "cli/doctor_command.h"
#include "cli/calibrate_command.h"
#include "cli/estimate_command.h"
#include "cli/plan_command.h"
#include "cli/launch_command.h"
#include "cli/report_command.h"
#include "cli/tool_commands.h"
#include "cli/train_command.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"zerotrain: DeepSpeed-style training of GPT models, native C++.\n"
               "Configuration is a DeepSpeed ds_config.json with zerotrain's model/data/training sections."};
  app.require_subcommand(1);

  zt::TrainCommandArgs train;
  bool demo = false;
  CLI::App* t = app.add_subcommand("train", "Train a model (no --config: the built-in demo on Debian's fortunes)");
  t->add_option("-c,--config", train.config_path, "ds_config.json with model/data/training sections");
  t->add_option("--set", train.overrides, "Override a config key: key.path=value (JSON value), repeatable");
  t->add_option("--device", train.device, "cpu (default), cuda, or auto (cuda where a GPU is usable): training.device")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  t->add_option("--resume", train.resume, "Continue from a checkpoint (a tag directory or a save directory), in any layout");
  t->add_option("--init", train.init,
                "Start from weights only: a checkpoint, or a HuggingFace GPT-2 or Llama model (its directory, "
                "model.safetensors or model.safetensors.index.json)");
  t->add_flag("--print-config", train.print_config, "Print the resolved configuration (aliases mapped, \"auto\" "
                                                     "resolved) as JSON and stop");
  t->add_flag("--demo", demo, "Run the built-in demo (the default when --config is absent)");
  t->callback([&] {
    if (demo) train.config_path.clear();
  });

  const CLI::Validator tokenizer_check(
      [](std::string& v) -> std::string {
        if (v == "gpt2" || v == "byte" || v.ends_with(".model") || v.ends_with(".json")) return "";
        return "expected gpt2, byte, or a path ending in .model (SentencePiece) or .json (tokenizer.json)";
      },
      "TOKENIZER");

  zt::PrepareCommandArgs prep;
  CLI::App* p = app.add_subcommand("prepare", "Tokenize text files into a token file (llm.c format)");
  p->add_option("inputs", prep.inputs, "Text files")->required();
  p->add_option("-o,--output", prep.output, "Token file for the training split")->required();
  p->add_option("--val-output", prep.val_output, "Token file for a validation split");
  p->add_option("--val-fraction", prep.val_fraction, "Fraction of documents for validation")->check(CLI::Range(0.0, 1.0));
  p->add_option("--separator", prep.separator, "A line equal to this separates documents (default: one per file)");
  p->add_option("--tokenizer", prep.tokenizer,
                "gpt2, byte, a SentencePiece path/to/tokenizer.model or a HuggingFace path/to/tokenizer.json")
      ->check(tokenizer_check);
  p->add_option("--bpe-dir", prep.bpe_dir, "Directory with GPT-2's encoder.json and vocab.bpe");
  p->add_option("--format", prep.format, "llmc or raw_uint16")->check(CLI::IsMember({"llmc", "raw_uint16"}));

  zt::SampleCommandArgs sample;
  CLI::App* s = app.add_subcommand("sample", "Generate text from a saved model");
  s->add_option("checkpoint", sample.checkpoint, "Checkpoint directory (tag, or save dir with 'latest')")->required();
  s->add_option("--prompt", sample.prompt, "Text to continue");
  s->add_option("--temperature", sample.temperature, "0 = greedy")->check(CLI::Range(0.0, 100.0));
  s->add_option("--top-k", sample.top_k, "0 = whole vocabulary")->check(CLI::NonNegativeNumber);
  s->add_option("--seed", sample.seed, "Random seed");
  s->add_option("--max-tokens", sample.max_tokens, "Tokens to generate")->check(CLI::PositiveNumber);
  s->add_option("--bpe-dir", sample.bpe_dir, "Directory with GPT-2's BPE files");
  s->add_option("--precision", sample.precision, "Compute dtype: fp32 (default), bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));

  zt::EvalCommandArgs eval;
  CLI::App* e = app.add_subcommand("eval", "Validation loss of a saved model on token files");
  e->add_option("checkpoint", eval.checkpoint, "Checkpoint directory")->required();
  e->add_option("--data", eval.data, "Token files or globs")->required();
  e->add_option("--format", eval.format, "auto, llmc or raw_uint16")->check(CLI::IsMember({"auto", "llmc", "raw_uint16"}));
  e->add_option("--precision", eval.precision, "Compute dtype: fp32 (default), bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  e->add_option("--batches", eval.batches, "Batches to evaluate (0 = all)")->check(CLI::NonNegativeNumber);
  e->add_option("--batch-size", eval.batch_size, "Sequences per batch")->check(CLI::PositiveNumber);

  zt::ExportCommandArgs exp;
  CLI::App* x = app.add_subcommand("export", "Write a checkpoint's model as HuggingFace files (GPT2LMHeadModel or "
                                             "LlamaForCausalLM): config.json + model.safetensors, or shards + index");
  x->add_option("checkpoint", exp.checkpoint, "Checkpoint (save directory with 'latest', or a tag directory)")->required();
  x->add_option("-o,--output", exp.output, "Output directory")->required();
  x->add_option("--dtype", exp.dtype, "Stored dtype: fp32 (default, exact), bf16 or fp16 (rounded to nearest even)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  x->add_option("--max-shard-size", exp.max_shard_size,
                "Largest weights file before sharding with model.safetensors.index.json: bytes, or e.g. 100MB, 5GB "
                "(default 5GB, as HuggingFace)");

  zt::ImportCommandArgs imp;
  CLI::App* i = app.add_subcommand("import", "Turn a HuggingFace GPT-2 or Llama model into a zerotrain checkpoint");
  i->add_option("model", imp.model, "Model directory (config.json + model.safetensors or model.safetensors.index.json "
                                    "and shards), or one of those weight files")->required();
  i->add_option("-o,--output", imp.output, "Save directory of the new checkpoint")->required();
  i->add_option("--tag", imp.tag, "Tag of the new checkpoint");
  i->add_option("--tokenizer", imp.tokenizer, "Tokenizer recorded for sample: gpt2, byte, or a path/to/tokenizer.model "
                                              "or path/to/tokenizer.json (default: the one beside the model, else gpt2)")
      ->check(tokenizer_check);

  zt::LaunchCommandArgs launch;
  CLI::App* l = app.add_subcommand("launch", "Run a zerotrain command on the hosts of a DeepSpeed hostfile through mpirun "
                                             "(prints the mpirun command)");
  l->add_option("-H,--hostfile", launch.hostfile, "DeepSpeed hostfile: \"hostname slots=N\" lines, # comments");
  l->add_option("-i,--include", launch.include, "Hosts and slots to use, e.g. host1:0,1@host2");
  l->add_option("-e,--exclude", launch.exclude, "Hosts and slots to leave out, same format");
  l->add_option("--num_nodes", launch.num_nodes, "Use the first N hosts")->check(CLI::PositiveNumber);
  l->add_option("--num_procs,--num_gpus", launch.num_procs, "Ranks per host (the first N slots)")->check(CLI::PositiveNumber);
  l->add_option("--launcher_args", launch.launcher_args, "Extra mpirun arguments, as one quoted string");
  l->add_flag("--dry-run", launch.dry_run, "Print the mpirun command without running it");
  l->add_option("command", launch.command, "The zerotrain command for every rank, after --: -- train --config c.json")
      ->required();

  zt::DoctorOptions doctor;
  CLI::App* d = app.add_subcommand("doctor", "Report the machine facts that decide speed and correctness (like ds_report); "
                                             "exit 1 on a problem that will slow or break training");
  d->add_option("--output-dir", doctor.output_dir, "Directory checkpoints would go to (probed for writes, io_uring, O_DIRECT)");
  d->add_option("--gemm-seconds", doctor.gemm_seconds, "Seconds for the GEMM speed probe and again for the FMA peak")
      ->check(CLI::Range(0.0, 60.0));

  zt::EstimateArgs est;
  CLI::App* m = app.add_subcommand("estimate", "Memory every rank of a run needs, from its configuration, before launching it");
  m->add_option("-c,--config", est.config.config_path, "ds_config.json with model/data/training sections (none: the demo)");
  m->add_option("--set", est.config.overrides, "Override a config key: key.path=value (JSON value), repeatable");
  m->add_option("--world", est.world, "Ranks of the run (mpirun -np)")->check(CLI::Range(1, 1 << 20));
  m->add_flag("--print-config", est.config.print_config, "Print the resolved configuration as JSON and stop");
  m->add_option("--hosts", est.hosts, "Hosts of the cluster (with --procs-per-host)")->check(CLI::Range(1, 1 << 16));
  m->add_option("--procs-per-host", est.procs_per_host, "Ranks per host")->check(CLI::Range(1, 1 << 12));
  m->add_option("--threads-per-rank", est.threads_per_rank, "Threads per rank (default: cores / procs per host)")
      ->check(CLI::Range(1, 1 << 12));
  m->add_option("--mem-per-host", est.mem_per_host, "Memory of a host, e.g. 64GiB: says whether the layout fits");
  m->add_option("--calibration", est.calibration, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  m->add_flag("--json", est.json, "One JSON object: memory of the largest rank and the predicted step");

  zt::PlanArgs plan;
  CLI::App* pl = app.add_subcommand("plan", "Search dp x pp x tp x ZeRO stage x micro-batch x checkpointing for a model on a "
                                             "cluster; rank the layouts that fit by predicted step time");
  pl->add_option("-c,--config", plan.estimate.config.config_path, "ds_config.json: the model, global batch and precision");
  pl->add_option("--set", plan.estimate.config.overrides, "Override a config key: key.path=value (JSON value), repeatable");
  pl->add_option("--hosts", plan.estimate.hosts, "Hosts of the cluster")->check(CLI::Range(1, 1 << 16));
  pl->add_option("--procs-per-host", plan.estimate.procs_per_host, "Ranks per host")->check(CLI::Range(1, 1 << 12));
  pl->add_option("--threads-per-rank", plan.estimate.threads_per_rank, "Threads per rank (default: cores / procs per host)")
      ->check(CLI::Range(1, 1 << 12));
  pl->add_option("--mem-per-host", plan.estimate.mem_per_host, "Memory of a host, e.g. 64GiB (default: no limit)");
  pl->add_option("--calibration", plan.estimate.calibration, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  pl->add_option("--top", plan.top, "Layouts to print")->check(CLI::Range(1, 100000));
  pl->add_option("--max-micro-batch", plan.max_micro_batch, "Largest micro-batch to try")->check(CLI::Range(1, 1 << 20));
  pl->add_flag("--json", plan.json, "One JSON object with the ranked layouts");

  zt::CalibrateArgs cal;
  CLI::App* cb = app.add_subcommand("calibrate", "Measure kernel rates (and, under mpirun, collective latency and bandwidth) "
                                                  "for estimate and plan; merged into the calibration cache");
  cb->add_option("-c,--config", cal.configs, "Measure the kernel calls of this config's model (repeatable; none: GPT-2 small)");
  cb->add_option("--micro-batches", cal.micro_batches, "Micro-batch sizes to measure")->delimiter(',');
  cb->add_option("--tp", cal.tp_degrees, "Tensor-parallel degrees to measure")->delimiter(',');
  cb->add_option("--precision", cal.precision, "fp32, bf16 or fp16: the compute table to fill");
  cb->add_option("-o,--output", cal.output, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  cb->add_flag("--skip-compute", cal.skip_compute, "Measure only the collectives");
  cb->add_flag("--skip-comm", cal.skip_comm, "Measure only the kernels");
  cb->add_flag("--quick", cal.quick, "Short timings and messages up to 4 MiB");

  CLI::App* cov = app.add_subcommand("config-coverage", "Print docs/config-coverage.md: every DeepSpeed key zerotrain "
                                                        "reads, maps, resolves from \"auto\" or refuses");

  zt::ReportArgs rep;
  CLI::App* r = app.add_subcommand("report", "One self-contained HTML page of one or more runs (overlaid): curves, "
                                             "throughput, breakdown, memory against the estimate, communication");
  r->add_option("runs", rep.runs, "Training output directories (metrics.csv, run_report.json)")->required();
  r->add_option("-o,--output", rep.output, "The HTML file to write (default report.html)");
  r->add_option("--png", rep.png, "Also draw the loss curves into this PNG (needs gnuplot)");

  app.set_version_flag("--version", zt::kZerotrainVersion);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& h) {
    return app.exit(h);
  } catch (const CLI::ParseError& err) {
    app.exit(err);
    return 2;  // bad usage, like a bad configuration
  }
  if (l->parsed()) return zt::run_launch(launch);
  if (d->parsed()) return zt::doctor_command(doctor);
  if (m->parsed()) return zt::run_estimate(est);
  if (r->parsed()) return zt::run_report(rep);
  if (cov->parsed()) return zt::run_config_coverage();
  // ZT_ISA and ZT_GEMM are read once, here: a bad value stops before any work.
  if (!zt::backend_environment_ok()) return 2;
  if (t->parsed()) return zt::run_train(train);
  if (cb->parsed()) return zt::run_calibrate(cal);
  if (pl->parsed()) return zt::run_plan(plan);
  if (p->parsed()) return zt::run_prepare(prep);
  if (s->parsed()) return zt::run_sample(sample);
  if (e->parsed()) return zt::run_eval(eval);
  if (x->parsed()) return zt::run_export(exp);
  if (i->parsed()) return zt::run_import(imp);
  return 2;
}
