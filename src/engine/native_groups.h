// adopt_native_groups: under a launcher on a device backend, the communicators of data,
// tensor and sequence parallelism, ZeRO and the tied weights become the backend's own
// process groups (NCCL on CUDA) where every rank can use them; otherwise every rank keeps
// the host groups (MPI), which the Trainer then stages through host memory
// (backend/staged_process_group.h). Pipeline hand-offs and MoE's exchange always stay on
// the host groups (NCCL has no tags), and so does the world group: it carries host-side
// agreement, reports and checkpoint metadata (byte strings over send and receive).
// Invariants: the choice is the same on every rank (agreed over the world group before
// any communicator is made); native groups are made in one fixed order of the fields, so
// each is made by all of its members in the same order; the host groups stay alive
// (they are the native groups' carriers).
#pragma once

#include <string>

#include "backend/backend.h"
#include "parallel/grid.h"

namespace zt {

// Collective over g->world. Returns the banner's line: "collectives over <the native
// group's name>", or why they stay on the host groups; "" where nothing applies (host
// memory, one process).
StatusOr<std::string> adopt_native_groups(ParallelGroups* g, const Backend& backend, const CommOptions& options);

}  // namespace zt
