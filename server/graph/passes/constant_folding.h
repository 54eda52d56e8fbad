// Import-time constant folding: every node whose outputs depend only on
// initializers and static shapes (the Shape -> Gather -> Unsqueeze -> Concat
// chains torch exports, Constant nodes, INT64 shape arithmetic, Casts of
// constants, ...) runs once, through the server's own ops on the host, and is
// replaced by initializers holding its results. Nodes that cannot be inferred
// (a dynamic dim, a bad attribute) are left as they are: the planner then
// reports them, naming the node as the client wrote it.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"

namespace npu::graph {

struct FoldOptions {
  const v1::Graph* weights = nullptr;  // more initializers, read in place (a registered model's)
  const device::DevicePreset* preset = nullptr;  // fp16 saturation of folded float math
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
  // A result larger than this stays a node: folding it would grow the graph
  // (an Expand of a scalar to a huge mask) instead of shrinking the work.
  uint64_t max_folded_bytes = uint64_t{64} << 20;
};

struct FoldStats {
  int folded_nodes = 0;
  uint64_t folded_bytes = 0;  // initializers added
};

// Folds `graph` in place. Errors only when a folded node's run fails (an index
// out of range in a Gather of constants): the run would fail the same way.
absl::StatusOr<FoldStats> FoldConstants(v1::Graph& graph, const FoldOptions& options);

}  // namespace npu::graph
