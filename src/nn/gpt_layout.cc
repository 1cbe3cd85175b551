// GptLayout: its chunks, and validation.
#include "nn/gpt_layout.h"

namespace zt {

void GptLayout::set_chunks(std::vector<BlockRange> ranges) {
  chunks = std::move(ranges);
  if (chunks.empty()) return;
  first_block = chunks.front().begin;
  end_block = chunks.back().end;
}

std::vector<BlockRange> GptLayout::block_ranges(const GptConfig& c) const {
  if (!chunks.empty()) return chunks;
  return {BlockRange{first_block, end(c)}};
}

std::vector<int> GptLayout::blocks(const GptConfig& c) const {
  std::vector<int> out;
  for (const BlockRange& r : block_ranges(c)) {
    for (int l = r.begin; l < r.end; ++l) out.push_back(l);
  }
  return out;
}

ChunkPart GptLayout::chunk(const GptConfig& c, int j) const {
  const BlockRange r = block_ranges(c)[static_cast<size_t>(j)];
  return {r.begin, r.end, embedding && j == 0, head && j == chunk_count() - 1};
}

bool GptLayout::owns_block(const GptConfig& c, int l) const {  // checked on every block call: no allocation
  if (chunks.empty()) return l >= first_block && l < end(c);
  for (const BlockRange& r : chunks) {
    if (l >= r.begin && l < r.end) return true;
  }
  return false;
}

namespace {

Status validate_chunks(const GptConfig& c, const GptLayout& lay) {
  int prev = 0;
  for (const BlockRange& r : lay.chunks) {
    if (r.begin < prev || r.end <= r.begin || r.end > c.n_layer) {
      return Status::InvalidArgument("chunk [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                                     ") is empty, overlaps the one before or lies beyond the model's " +
                                     std::to_string(c.n_layer) + " blocks");
    }
    prev = r.end;
  }
  if (!lay.chunks.empty() && (lay.first_block != lay.chunks.front().begin || lay.end(c) != lay.chunks.back().end)) {
    return Status::InvalidArgument("first_block and end_block disagree with the chunks (use set_chunks)");
  }
  return Status::OK();
}

}  // namespace

Status GptLayout::validate(const GptConfig& c) const {
  ZT_RETURN_IF_ERROR(validate_chunks(c, *this));
  if (first_block < 0 || end(c) > c.n_layer || first_block > end(c)) {
    return Status::InvalidArgument("blocks [" + std::to_string(first_block) + ", " + std::to_string(end(c)) +
                                   ") are not within the model's " + std::to_string(c.n_layer) + " blocks");
  }
  if (first_block == end(c) && !embedding && !head) return Status::InvalidArgument("a stage must hold some layer");
  if (tp_size < 1 || tp_rank < 0 || tp_rank >= tp_size) {
    return Status::InvalidArgument("tensor-parallel rank " + std::to_string(tp_rank) + " of " + std::to_string(tp_size));
  }
  if (ep_size < 1 || ep_rank < 0 || ep_rank >= ep_size) {
    return Status::InvalidArgument("expert-parallel rank " + std::to_string(ep_rank) + " of " + std::to_string(ep_size));
  }
  if (ep_size > 1 && (!c.moe.enabled() || c.moe.num_experts % ep_size != 0)) {
    return Status::InvalidArgument("/parallel/ep (model.moe.ep_size): " + std::to_string(ep_size) + " must divide num_experts=" +
                                   std::to_string(c.moe.num_experts) + " (each rank holds num_experts / ep_size experts)");
  }
  if (c.n_head % tp_size != 0) {
    return Status::InvalidArgument("/parallel/tp: " + std::to_string(tp_size) + " does not divide n_head=" +
                                   std::to_string(c.n_head));
  }
  if (c.kv_heads() % tp_size != 0) {
    return Status::InvalidArgument("/parallel/tp: " + std::to_string(tp_size) + " does not divide num_key_value_heads=" +
                                   std::to_string(c.kv_heads()) + "; each tensor-parallel rank holds whole kv heads "
                                   "(Megatron and Meta's rule), so tp must divide the kv heads");
  }
  if (c.mlp_width() % tp_size != 0) {
    return Status::InvalidArgument("/parallel/tp: " + std::to_string(tp_size) + " does not divide intermediate_size=" +
                                   std::to_string(c.mlp_width()));
  }
  if (c.padded_vocab() % tp_size != 0) {
    return Status::InvalidArgument("/parallel/tp: " + std::to_string(tp_size) + " does not divide the padded vocabulary " +
                                   std::to_string(c.padded_vocab()) + "; set model.padded_vocab_size to a multiple of it");
  }
  return validate_sequence_parallel(c);
}

Status GptLayout::validate_sequence_parallel(const GptConfig& c) const {
  if (sp_size < 1 || sp_rank < 0 || sp_rank >= sp_size) {
    return Status::InvalidArgument("sequence-parallel rank " + std::to_string(sp_rank) + " of " + std::to_string(sp_size));
  }
  if (sp_size == 1) return Status::OK();
  const std::string key = "/sequence_parallel_size: " + std::to_string(sp_size);
  if (c.n_head % sp_size != 0) {
    return Status::InvalidArgument(key + " does not divide n_head=" + std::to_string(c.n_head) +
                                   " (each rank attends with n_head / sp heads over the whole sequence)");
  }
  const std::string no = key + " with ";
  if (tp_size > 1) return Status::Unimplemented(no + "tensor parallelism (/parallel/tp) is not supported yet");
  if (c.moe.enabled()) return Status::Unimplemented(no + "experts (model.moe) is not supported yet");
  return Status::OK();
}

}  // namespace zt
