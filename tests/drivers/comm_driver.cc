// zt_comm_driver: the MPI backend under mpirun, for tests/comm/comm_mpi_test.cc.
//   --mode check: runs the collective checks of the thread-backend tests on the world
//     (kMpi), on full-size splits with the ring (4 KiB chunks and the default 1 MiB) and on
//     an even/odd split, with sizes that are not multiples of the chunk, uneven and zero
//     segments, several operations in flight, and bit-identical results across ranks.
//     Each rank prints "rank R: PASS (K checks)" or its failures; rank 0 ends with
//     "comm_driver: all N ranks passed". Exit status 0 only when every rank passed.
//   --mode stop|kill --victim V --at S: a loop of all_reduces in which rank V raises
//     SIGSTOP / SIGKILL before step S, printing "stopping itself at step S (t=<epoch s>)".
//   --token X is ignored: it lets the test find these processes by their command line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "comm/half_sum.h"
#include "comm/mpi_world.h"
#include "core/rng.h"

namespace zt {
namespace {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Checker {
  int rank = 0;
  std::string label;
  int checks = 0;
  int failures = 0;
  void expect(bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    if (++failures <= 20) std::printf("rank %d [%s]: FAIL %s\n", rank, label.c_str(), what.c_str());
  }
  bool ok(const Status& s, const std::string& what) {
    expect(s.ok(), what + ": " + s.to_string());
    return s.ok();
  }
};

std::vector<size_t> uneven_counts(int n, size_t scale) {
  std::vector<size_t> counts(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) counts[r] = (r % 3 == 1) ? 0 : scale * static_cast<size_t>(r + 1) + 37 * r + 5;
  return counts;
}

void check_all_reduce(ProcessGroup& g, Checker& c) {
  const int n = g.size(), r = g.rank();
  const int64_t tri = int64_t{n} * (n + 1) / 2;
  // Every size in flight at once (ring operations run concurrently, each on its own tag).
  const std::vector<size_t> counts = {0, 1, 3, 7, 1000, 1025, 65537, 300001};
  std::vector<std::vector<float>> bufs(counts.size());
  std::vector<WorkHandle> works;
  for (size_t k = 0; k < counts.size(); ++k) {
    bufs[k].resize(counts[k]);
    for (size_t i = 0; i < counts[k]; ++i) bufs[k][i] = static_cast<float>((r + 1) * static_cast<int>(i % 7 + 1));
    works.push_back(g.all_reduce(bufs[k].data(), counts[k], CommDType::kF32));
  }
  for (size_t k = counts.size(); k-- > 0;) {
    if (!c.ok(works[k]->wait(), "all_reduce f32")) continue;
    size_t bad = 0;
    for (size_t i = 0; i < counts[k]; ++i) bad += bufs[k][i] != static_cast<float>(tri * static_cast<int>(i % 7 + 1));
    c.expect(bad == 0, "all_reduce f32 of " + std::to_string(counts[k]) + ": " + std::to_string(bad) + " wrong");
  }
  std::vector<double> d(513);
  std::vector<int64_t> q(513);
  for (size_t i = 0; i < d.size(); ++i) {
    d[i] = 0.5 * (r + 1) + static_cast<double>(i);
    q[i] = (int64_t{r + 1} << 33) + static_cast<int64_t>(i);
  }
  auto wd = g.all_reduce(d.data(), d.size(), CommDType::kF64);
  auto wq = g.all_reduce(q.data(), q.size(), CommDType::kI64);
  if (c.ok(wq->wait(), "all_reduce i64") && c.ok(wd->wait(), "all_reduce f64")) {
    size_t bad = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      bad += d[i] != 0.5 * static_cast<double>(tri) + static_cast<double>(n) * static_cast<double>(i);
      bad += q[i] != (tri << 33) + int64_t{n} * static_cast<int64_t>(i);
    }
    c.expect(bad == 0, "all_reduce f64/i64: " + std::to_string(bad) + " wrong");
  }
}

void check_segments(ProcessGroup& g, Checker& c, size_t scale) {
  const int n = g.size(), r = g.rank();
  const std::vector<size_t> counts = uneven_counts(n, scale);
  std::vector<size_t> off(n + 1, 0);
  for (int q = 0; q < n; ++q) off[q + 1] = off[q] + counts[q];
  std::vector<float> rs(off[n]), ag(off[n], -1.0f);
  for (size_t j = 0; j < off[n]; ++j) rs[j] = static_cast<float>((r + 1) * static_cast<int>(j % 1000 + 1));
  for (size_t j = off[r]; j < off[r + 1]; ++j) ag[j] = static_cast<float>(r * 100000 + static_cast<int>(j - off[r]));
  // Both in flight at once, waited in reverse order.
  auto w_rs = g.reduce_scatter(rs.data(), counts);
  auto w_ag = g.all_gather(ag.data(), counts);
  const bool ok_ag = c.ok(w_ag->wait(), "all_gather");
  if (c.ok(w_rs->wait(), "reduce_scatter")) {
    size_t bad = 0;
    for (size_t j = off[r]; j < off[r + 1]; ++j) bad += rs[j] != static_cast<float>(n * (n + 1) / 2 * static_cast<int>(j % 1000 + 1));
    c.expect(bad == 0, "reduce_scatter scale " + std::to_string(scale) + ": " + std::to_string(bad) + " wrong");
  }
  if (ok_ag) {
    size_t bad = 0;
    for (int q = 0; q < n; ++q) {
      for (size_t j = off[q]; j < off[q + 1]; ++j) bad += ag[j] != static_cast<float>(q * 100000 + static_cast<int>(j - off[q]));
    }
    c.expect(bad == 0, "all_gather scale " + std::to_string(scale) + ": " + std::to_string(bad) + " wrong");
  }
}

void check_broadcast_and_p2p(ProcessGroup& g, Checker& c) {
  const int n = g.size(), r = g.rank(), root = n - 1;
  std::vector<unsigned char> b(100003);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(r == root ? (i * 13 + 5) & 0xff : 0);
  auto wb = g.broadcast(b.data(), b.size(), root);
  auto wbar = g.barrier();
  if (c.ok(wbar->wait(), "barrier") && c.ok(wb->wait(), "broadcast")) {
    size_t bad = 0;
    for (size_t i = 0; i < b.size(); ++i) bad += b[i] != static_cast<unsigned char>((i * 13 + 5) & 0xff);
    c.expect(bad == 0, "broadcast from root " + std::to_string(root));
  }
  if (n == 1) return;
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  for (int order = 0; order < 2; ++order) {
    std::vector<int> out(25001, r), in(25001, -1);
    WorkHandle ws, wr;
    if (order == 0) {
      ws = g.send(out.data(), out.size() * sizeof(int), right, 3);
      wr = g.recv(in.data(), in.size() * sizeof(int), left, 3);
    } else {
      wr = g.recv(in.data(), in.size() * sizeof(int), left, 3);
      ws = g.send(out.data(), out.size() * sizeof(int), right, 3);
    }
    if (c.ok(wr->wait(), "recv") && c.ok(ws->wait(), "send")) {
      c.expect(std::all_of(in.begin(), in.end(), [&](int x) { return x == left; }), "send/recv order " + std::to_string(order));
    }
  }
}

// Random inputs: every rank must hold the same bits afterwards, and a second run must
// reproduce them.
void check_bit_identical(ProcessGroup& g, Checker& c) {
  const size_t count = 300001;
  std::vector<float> input(count);
  Rng rng(1234 + static_cast<uint64_t>(g.rank()));
  for (float& v : input) v = static_cast<float>(rng.normal() * (1 + g.rank() % 3 * 100));
  std::vector<float> first = input, second = input, from_root;
  if (!c.ok(g.all_reduce(first.data(), count, CommDType::kF32)->wait(), "all_reduce random")) return;
  if (!c.ok(g.all_reduce(second.data(), count, CommDType::kF32)->wait(), "all_reduce random again")) return;
  c.expect(std::memcmp(first.data(), second.data(), count * sizeof(float)) == 0, "all_reduce is not deterministic");
  from_root = first;
  if (!c.ok(g.broadcast(from_root.data(), count * sizeof(float), 0)->wait(), "broadcast result")) return;
  c.expect(std::memcmp(first.data(), from_root.data(), count * sizeof(float)) == 0,
           "all_reduce results differ from rank 0's bits");
}

// Uneven segments (some empty), two exchanges in flight at once: each must land whole,
// from the right peer, in order.
size_t a2a_bytes(int from, int to) { return (from + to) % 4 == 3 ? 0 : size_t((from * 7 + to * 3) % 5) * 1000 + 13 * from + to + 1; }
unsigned char a2a_byte(int from, int to, size_t i, int round) { return static_cast<unsigned char>((from * 31 + to * 17 + i + round * 101) & 0xff); }

void check_all_to_all(ProcessGroup& g, Checker& c) {
  const int n = g.size(), r = g.rank();
  std::vector<size_t> sb(static_cast<size_t>(n)), rb(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    sb[static_cast<size_t>(q)] = a2a_bytes(r, q);
    rb[static_cast<size_t>(q)] = a2a_bytes(q, r);
  }
  std::vector<std::vector<unsigned char>> in(2), out(2);
  std::vector<WorkHandle> works;
  for (int round = 0; round < 2; ++round) {
    for (int q = 0; q < n; ++q) {
      for (size_t i = 0; i < sb[static_cast<size_t>(q)]; ++i) in[round].push_back(a2a_byte(r, q, i, round));
    }
    size_t total = 0;
    for (size_t b : rb) total += b;
    out[round].assign(total, 0);
    works.push_back(g.all_to_all(in[round].data(), sb, out[round].data(), rb));
  }
  for (int round = 0; round < 2; ++round) {
    if (!c.ok(works[static_cast<size_t>(round)]->wait(), "all_to_all")) continue;
    size_t at = 0, bad = 0;
    for (int q = 0; q < n; ++q) {
      for (size_t i = 0; i < rb[static_cast<size_t>(q)]; ++i) bad += out[round][at + i] != a2a_byte(q, r, i, round);
      at += rb[static_cast<size_t>(q)];
    }
    c.expect(bad == 0, "all_to_all round " + std::to_string(round) + ": " + std::to_string(bad) + " wrong bytes");
  }
}

// 16-bit all_reduce (several ring chunks a segment) and reduce_scatter_16: every element
// within comm/half_sum.h's bound of the exact sum of the 16-bit inputs, all_reduce's bits
// the same on every rank.
float half_input(int rank, size_t i) {
  return std::ldexp(1.0f + static_cast<float>((i * 37 + rank * 11) % 255) / 256.0f, static_cast<int>((i + rank) % 7)) *
         ((i + rank) % 3 == 0 ? -1.0f : 1.0f);
}

size_t half_out_of_bound(CommDType d, int n, const std::vector<uint16_t>& got, size_t lo, size_t hi) {
  const double u = d == CommDType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  size_t bad = 0;
  for (size_t i = lo; i < hi; ++i) {
    double exact = 0, mag = 0;
    for (int q = 0; q < n; ++q) {
      const double v = half_to_float(d, float_to_half(d, half_input(q, i)));
      exact += v;
      mag += std::fabs(v);
    }
    bad += std::fabs(half_to_float(d, got[i]) - exact) > (n - 1) * u * mag;
  }
  return bad;
}

void check_half(ProcessGroup& g, Checker& c) {
  const int n = g.size(), r = g.rank();
  for (CommDType d : {CommDType::kBF16, CommDType::kF16}) {
    std::vector<uint16_t> x(3000001);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float_to_half(d, half_input(r, i));
    if (!c.ok(g.all_reduce(x.data(), x.size(), d)->wait(), "all_reduce 16-bit")) continue;
    c.expect(half_out_of_bound(d, n, x, 0, x.size()) == 0, std::string("all_reduce ") + comm_dtype_name(d) + " bound");
    std::vector<uint16_t> root = x;
    if (!c.ok(g.broadcast(root.data(), root.size() * 2, 0)->wait(), "broadcast 16-bit")) continue;
    c.expect(root == x, std::string("all_reduce ") + comm_dtype_name(d) + ": ranks hold different bits");
    const std::vector<size_t> counts = uneven_counts(n, 3000);
    std::vector<size_t> off(n + 1, 0);
    for (int q = 0; q < n; ++q) off[q + 1] = off[q] + counts[q];
    std::vector<uint16_t> y(off[n]);
    for (size_t i = 0; i < y.size(); ++i) y[i] = float_to_half(d, half_input(r, i));
    if (!c.ok(g.reduce_scatter_16(y.data(), counts, d)->wait(), "reduce_scatter_16")) continue;
    c.expect(half_out_of_bound(d, n, y, off[r], off[r + 1]) == 0,
             std::string("reduce_scatter_16 ") + comm_dtype_name(d) + " bound");
  }
}

void check_stats(ProcessGroup& g, Checker& c) {
  g.reset_stats();
  std::vector<float> x(1000, 1.0f);
  c.ok(g.all_reduce(x.data(), x.size(), CommDType::kF32)->wait(), "all_reduce for stats");
  const CommStats s = g.stats();
  c.expect(s.of(CommOp::kAllReduce).calls == 1 && s.of(CommOp::kAllReduce).logical_bytes == 8000,
           "stats count one all_reduce of 4000 B as 8000 logical bytes");
  c.expect(s.busy_seconds >= s.exposed_seconds && s.hidden_fraction() >= 0.0 && s.hidden_fraction() <= 1.0,
           "busy >= exposed");
}

void run_checks(ProcessGroup& g, Checker& c) {
  check_all_reduce(g, c);
  check_segments(g, c, 1);
  check_segments(g, c, 3000);
  check_broadcast_and_p2p(g, c);
  check_bit_identical(g, c);
  check_all_to_all(g, c);
  check_half(g, c);
  check_stats(g, c);
}

int check_mode(MpiWorld& world, double timeout_s) {
  ProcessGroup& g = world.world();
  const int rank = g.rank(), n = g.size();
  Checker c;
  c.rank = rank;
  c.label = "world, mpi";
  run_checks(g, c);
  for (size_t chunk : {size_t{4096}, size_t{1} << 20}) {
    CommOptions ring;
    ring.timeout_s = timeout_s;
    ring.algorithm = CommAlgorithm::kRing;
    ring.ring_chunk_bytes = chunk;
    auto split = world.split(0, rank, ring);
    if (!c.ok(split.status(), "split")) continue;
    c.label = "ring, chunk " + std::to_string(chunk) + " B";
    c.expect(split.value()->size() == n && split.value()->rank() == rank, "full split keeps ranks");
    run_checks(*split.value(), c);
  }
  for (CommAlgorithm algo : {CommAlgorithm::kMpi, CommAlgorithm::kRing}) {
    CommOptions o;
    o.timeout_s = timeout_s;
    o.algorithm = algo;
    o.ring_chunk_bytes = 4096;
    auto half = world.split(rank % 2, rank, o);
    if (!c.ok(half.status(), "split even/odd")) continue;
    c.label = std::string("even/odd split, ") + (algo == CommAlgorithm::kRing ? "ring" : "mpi");
    float x = static_cast<float>(rank);
    std::vector<float> v(5000, static_cast<float>(rank));
    auto w1 = half.value()->all_reduce(&x, 1, CommDType::kF32);
    auto w2 = half.value()->all_reduce(v.data(), v.size(), CommDType::kF32);
    float expect = 0;
    for (int q = rank % 2; q < n; q += 2) expect += static_cast<float>(q);
    if (c.ok(w2->wait(), "split all_reduce") && c.ok(w1->wait(), "split all_reduce")) {
      c.expect(x == expect && v[4999] == expect, "even/odd split sum");
    }
  }
  if (c.failures == 0) std::printf("rank %d: PASS (%d checks)\n", rank, c.checks);
  std::fflush(stdout);
  int64_t failed = c.failures > 0 ? 1 : 0;
  Status s = g.all_reduce(&failed, 1, CommDType::kI64)->wait();
  if (!s.ok()) {
    std::printf("rank %d: final all_reduce failed: %s\n", rank, s.to_string().c_str());
    return 1;
  }
  if (rank == 0 && failed == 0) std::printf("comm_driver: all %d ranks passed\n", n);
  if (rank == 0 && failed != 0) std::printf("comm_driver: %lld of %d ranks failed\n", static_cast<long long>(failed), n);
  return failed == 0 ? 0 : 1;
}

int fault_mode(MpiWorld& world, const std::string& mode, int victim, int at, size_t count) {
  ProcessGroup& g = world.world();
  std::vector<float> x(count, 1.0f);
  for (int step = 0; step < at + 1000; ++step) {
    g.set_step(step);
    if (g.rank() == victim && step == at) {
      std::printf("rank %d: stopping itself at step %d (t=%.3f)\n", victim, step, epoch_seconds());
      std::fflush(stdout);
      std::raise(mode == "stop" ? SIGSTOP : SIGKILL);
    }
    Status s = g.all_reduce(x.data(), count, CommDType::kF32)->wait();
    if (!s.ok()) {
      std::printf("rank %d: %s\n", g.rank(), s.to_string().c_str());
      return 1;
    }
  }
  std::printf("rank %d: finished without a fault\n", g.rank());
  return 0;
}

int driver_main(int argc, char** argv) {
  std::string mode = "check";
  int victim = 1, at = 5;
  size_t count = size_t{1} << 20;
  CommOptions options;
  options.timeout_s = 60.0;
  std::string algorithm = "mpi", token;
  CLI::App app{"zt_comm_driver: comm-layer checks and fault scenarios"};
  app.add_option("--mode", mode);
  app.add_option("--victim", victim);
  app.add_option("--at", at);
  app.add_option("--count", count);
  app.add_option("--timeout", options.timeout_s);
  app.add_option("--algorithm", algorithm)->check(CLI::IsMember({"mpi", "ring"}));
  app.add_option("--token", token, "ignored: tells one test's processes apart");
  CLI11_PARSE(app, argc, argv);
  options.algorithm = algorithm == "ring" ? CommAlgorithm::kRing : CommAlgorithm::kMpi;
  if (!launched_by_mpi()) std::printf("zt_comm_driver: not under an MPI launcher; running as a world of one\n");
  auto world = MpiWorld::init(options);
  if (!world.ok()) {
    std::fprintf(stderr, "zt_comm_driver: %s\n", world.status().to_string().c_str());
    return 1;
  }
  if (mode == "check") return check_mode(*world.value(), options.timeout_s);
  return fault_mode(*world.value(), mode, victim, at, count);
}

}  // namespace
}  // namespace zt

int main(int argc, char** argv) { return zt::driver_main(argc, argv); }
