// The rules a graph's structure obeys before any shape is known, checked in
// one place for the planner, the import-time passes (which run only on a
// graph that obeys them) and a dynamic graph's registration:
//   - graph inputs, initializers and node outputs share one namespace, and
//     every value in it is defined once (single assignment, as ONNX's graphs
//     are), never with an empty name;
//   - node names are unique; every op is known; every node has the inputs and
//     outputs its op's schema allows (at least one output);
//   - every name a node reads, and every graph output, is defined; the graph
//     has outputs, each listed once.
// Each error names the node (and, for a value defined twice, its first
// definer).
#pragma once

#include "absl/status/status.h"
#include "npu/v1/graph.pb.h"

namespace npu::graph {

// `weights`: a second graph whose initializers count as the graph's (a
// registered model's, when `graph` is its structure after the passes); may
// be null. Unnamed nodes are named "<op>_<index>" in errors, as the planner names them.
absl::Status CheckGraphStructure(const v1::Graph& graph, const v1::Graph* weights = nullptr);

}  // namespace npu::graph
