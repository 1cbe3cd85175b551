// MpiWorld: MPI initialisation, the world group, split() and finalisation.
#include "comm/mpi_world.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "comm/mpi_call.h"
#include "comm/mpi_process_group.h"

namespace zt {

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

namespace {

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

}  // namespace

StatusOr<std::unique_ptr<MpiWorld>> MpiWorld::init(const CommOptions& options) {
  int flag = 0;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Finalized(&flag), "MPI_Finalized", "initialising MPI"));
  if (flag) return Status::FailedPrecondition("MPI was already finalised in this process; it cannot start again");
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Initialized(&flag), "MPI_Initialized", "initialising MPI"));
  if (flag) return Status::FailedPrecondition("MPI was already initialised in this process; create one MpiWorld only");
  int provided = MPI_THREAD_SINGLE;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread",
                               "initialising MPI"));
  if (provided < MPI_THREAD_MULTIPLE) {
    mpi_warn(MPI_Finalize(), "MPI_Finalize", "refusing the MPI library");
    return Status::FailedPrecondition(std::string("the MPI library grants only ") + thread_level_name(provided) +
                                      "; zerotrain's communication threads need MPI_THREAD_MULTIPLE (use an MPI "
                                      "built with thread support, e.g. Open MPI >= 3)");
  }
  auto registry = std::make_shared<MpiRegistry>();
  std::unique_ptr<MpiWorld> world(new MpiWorld(options, registry));  // finalises MPI on failure below
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
                               "initialising MPI"));
  MPI_Comm comm = MPI_COMM_NULL;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup", "creating group world"));
  ZT_ASSIGN_OR_RETURN(auto group, MpiProcessGroup::create(comm, "world", options, registry));
  world->world_ = std::move(group);
  return world;
}

MpiWorld::MpiWorld(const CommOptions& options, std::shared_ptr<MpiRegistry> registry)
    : options_(options), registry_(std::move(registry)) {}

MpiWorld::~MpiWorld() {
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    for (MpiProcessGroup* group : registry_->live) group->release();
    registry_->finalized = true;
  }
  mpi_warn(MPI_Finalize(), "MPI_Finalize", "destroying the MPI world");
}

StatusOr<std::unique_ptr<ProcessGroup>> MpiWorld::split(int color, int key) { return split(color, key, options_); }

StatusOr<std::unique_ptr<ProcessGroup>> MpiWorld::split(int color, int key, const CommOptions& options) {
  ZT_CHECK(color >= 0, "split: color %d must be >= 0", color);
  const std::string name = "split(color " + std::to_string(color) + ", key " + std::to_string(key) + ")";
  MPI_Comm comm = MPI_COMM_NULL;
  // Split MPI_COMM_WORLD, not the world group's communicator: its communication thread may
  // be running collectives on that one right now.
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm), "MPI_Comm_split", "creating " + name));
  ZT_ASSIGN_OR_RETURN(auto group, MpiProcessGroup::create(comm, name, options, registry_));
  return std::unique_ptr<ProcessGroup>(std::move(group));
}

void abort_mpi_job(const Status& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "zerotrain: %s\n", why.message().c_str());
  std::fflush(stderr);
  const int code = why.code() == StatusCode::kDeadlineExceeded ? kExitCommTimeout : 1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

}  // namespace zt
