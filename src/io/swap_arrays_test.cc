// SwapArrays and IoEngine: chunked streaming round trips (io_uring, the pread/pwrite
// fallback, buffered files), range reads, checksums catching a changed byte, and errors
// that name the file.
#include "io/swap_arrays.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <vector>

namespace zt {
namespace {

class SwapArraysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("zt_swap_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SwapArrays> make(IoEngine* io, size_t numel, size_t chunk) {
    auto s = SwapArrays::create(io, dir_.string(), "t", {{"a", 4}, {"b", 2}}, numel, chunk, false);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return std::move(s).value();
  }
  // Writes a[i] = i + pass and b[i] = (i * 7 + pass) & 0xffff through every chunk,
  // reading first when check is set and verifying the previous pass's values.
  Status pass(SwapArrays& s, int k, bool check) {
    return s.stream({check, check}, {true, true}, [&](size_t begin, size_t n, void* const* arr) -> Status {
      auto* a = static_cast<float*>(arr[0]);
      auto* b = static_cast<uint16_t*>(arr[1]);
      for (size_t i = 0; i < n; ++i) {
        const size_t g = begin + i;
        if (check && (a[i] != static_cast<float>(g + k - 1) || b[i] != static_cast<uint16_t>(g * 7 + k - 1))) {
          return Status::Internal("element " + std::to_string(g) + " lost");
        }
        a[i] = static_cast<float>(g + k);
        b[i] = static_cast<uint16_t>(g * 7 + k);
      }
      return Status::OK();
    });
  }
  void round_trip(const AioConfig& cfg) {
    auto io = IoEngine::create(cfg);
    ASSERT_TRUE(io.ok());
    const size_t numel = 5 * kChunkAlignElems + 1234;  // six chunks, the last one short
    auto s = make(io->get(), numel, kChunkAlignElems);
    ASSERT_EQ(s->chunks(), 6u);
    ASSERT_TRUE(pass(*s, 1, false).ok());
    for (int k = 2; k < 5; ++k) ASSERT_TRUE(pass(*s, k, true).ok()) << k;
    EXPECT_GE((*io)->bytes_written(), 4 * numel * 6);
    // A range read across a chunk boundary, unaligned at both ends.
    const size_t lo = kChunkAlignElems - 100, hi = 2 * kChunkAlignElems + 77;
    auto staging = IoBuffer::allocate(s->staging_bytes(0, lo, hi), false, "staging");
    ASSERT_TRUE(staging.ok());
    auto got = s->finish_read(s->start_read(0, lo, hi, staging->data()));
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const float* f = static_cast<const float*>(*got);
    for (size_t i = lo; i < hi; ++i) ASSERT_EQ(f[i - lo], static_cast<float>(i + 4));
  }
  std::filesystem::path dir_;
};

TEST_F(SwapArraysTest, StreamsChunksThroughIoUring) {
  AioConfig cfg;
  cfg.block_size = 16384;  // several pieces per chunk
  cfg.queue_depth = 4;
  round_trip(cfg);
}

TEST_F(SwapArraysTest, SubmitModesAndThreads) {
  AioConfig cfg;
  cfg.block_size = 8192;
  cfg.single_submit = true;
  cfg.overlap_events = false;
  cfg.thread_count = 3;
  round_trip(cfg);
}

TEST_F(SwapArraysTest, FallsBackToPreadAndBufferedFiles) {
  ::setenv("ZT_TEST_NO_URING", "1", 1);
  ::setenv("ZT_TEST_NO_ODIRECT", "1", 1);
  auto io = IoEngine::create(AioConfig{});
  ASSERT_TRUE(io.ok());
  EXPECT_NE((*io)->mode().find("pread/pwrite"), std::string::npos);
  auto s = make(io->get(), 1000, 1);
  EXPECT_FALSE(s->direct());
  round_trip(AioConfig{});
  ::unsetenv("ZT_TEST_NO_URING");
  ::unsetenv("ZT_TEST_NO_ODIRECT");
}

TEST_F(SwapArraysTest, ChecksumCatchesAChangedByte) {
  auto io = IoEngine::create(AioConfig{});
  ASSERT_TRUE(io.ok());
  auto s = make(io->get(), 3 * kChunkAlignElems, kChunkAlignElems);
  ASSERT_TRUE(pass(*s, 1, false).ok());
  auto m = s->map(1, /*writable=*/true);
  ASSERT_TRUE(m.ok());
  static_cast<unsigned char*>(*m)[2 * kChunkAlignElems * 2 + 5] ^= 1;  // chunk 2 of array b
  ASSERT_TRUE(s->unmap(/*written=*/false).ok());                         // behind the checksums' back
  int seen = 0;
  const Status st = s->stream({true, true}, {true, true}, [&](size_t, size_t, void* const*) {
    ++seen;
    return Status::OK();
  });
  EXPECT_EQ(seen, 2);  // chunks 0 and 1 were updated; chunk 2 was refused
  ASSERT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("t.b.swp"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("checksum"), std::string::npos);
  // Written through a mapping and re-checksummed, the same change is accepted.
  m = s->map(1, true);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(s->unmap(true).ok());
  EXPECT_TRUE(s->stream({true, true}, {true, true}, [](size_t, size_t, void* const*) { return Status::OK(); }).ok());
}

TEST_F(SwapArraysTest, MissingDirectoryNamesTheFile) {
  auto io = IoEngine::create(AioConfig{});
  ASSERT_TRUE(io.ok());
  auto s = SwapArrays::create(io->get(), (dir_ / "nope").string(), "t", {{"a", 4}}, 10, 1, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("nope/t.a.swp"), std::string::npos) << s.status().message();
}

TEST(AioConfigTest, RefusesUnalignedBlocks) {
  AioConfig c;
  c.block_size = 1000;
  const Status s = c.validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/aio/block_size"), std::string::npos);
}

}  // namespace
}  // namespace zt
