// The eigenvalue estimate in the training loop; see eigenvalue_step.h.
#include "engine/eigenvalue_step.h"

#include <cstdio>
#include <string>

namespace zt {

StatusOr<std::vector<double>> EigenvalueStep::run(int64_t step, const std::vector<MicroBatch>& micro,
                                                  const std::function<void(const std::string&)>& log) {
  const EigenvalueOptions& o = cfg_.efficiency.eigenvalue;
  if (!o.enabled || step % o.gas_boundary_resolution != 0) return std::vector<double>{};
  if (probe_ == nullptr) {
    probe_ = std::make_unique<HessianProbe>(cfg_.model, static_cast<int>(cfg_.batch.micro_batch), cfg_.data.seq_len,
                                            &trainer_->dp());
  }
  ZT_ASSIGN_OR_RETURN(const std::vector<BlockEigenvalue> blocks, trainer_block_eigenvalues(*trainer_, probe_.get(), micro, o));
  std::vector<double> values;
  for (const BlockEigenvalue& b : blocks) values.push_back(b.value);
  if (o.verbose) {
    char line[160];
    for (size_t b = 0; b < blocks.size(); ++b) {
      std::snprintf(line, sizeof(line), "step %lld: block: %zu, power iteration: %d, eigenvalue: %.6g",
                    static_cast<long long>(step), b, blocks[b].iterations, blocks[b].value);
      log(line);
    }
    std::string post = "post processed block_eigenvalue: [";
    const std::vector<double> p = post_process_eigenvalues(values);
    for (size_t b = 0; b < p.size(); ++b) post += (b ? ", " : "") + std::to_string(p[b]);
    log("step " + std::to_string(step) + ": " + post + "]");
  }
  return eigenvalues_per_parameter(trainer_->param_table(), blocks);
}

}  // namespace zt
