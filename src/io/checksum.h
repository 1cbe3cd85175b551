// Checksums of checkpoint and swap bytes: XXH3-64 (libxxhash), written as 16 lowercase hex digits.
// Not cryptographic: they catch torn writes and flipped bits, not tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zt {

uint64_t checksum64(const void* data, size_t bytes);
std::string checksum_hex(uint64_t value);
std::string checksum_hex(const void* data, size_t bytes);

// The checksum of every `block` bytes of data (the last block shorter), computed over
// the OpenMP threads where there are more than 64 blocks (the blocks are independent): a
// swap chunk is hundreds of MB at DeepSpeed's sub_group_size.
std::vector<uint64_t> checksum_blocks(const unsigned char* data, size_t bytes, size_t block);

// Streaming: the checksum of the concatenation of several pieces.
class Checksummer {
 public:
  Checksummer();
  ~Checksummer();
  Checksummer(const Checksummer&) = delete;
  Checksummer& operator=(const Checksummer&) = delete;
  void update(const void* data, size_t bytes);
  uint64_t digest() const;

 private:
  void* state_;  // XXH3_state_t
};

}  // namespace zt
