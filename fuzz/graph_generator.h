// Structure-aware graph generation for fuzzing: graphs built from the op
// registry's own schemas (OpDef: input counts, dtypes, attribute names and
// kinds, shape inputs), so that most inputs get past the protobuf framing and
// the arity checks and reach shape inference, planning and execution.
//
// Node by node: an op from the registry, inputs from the values made so far
// (typed by planning the graph so far) or fresh initializers, constant integer
// lists where the op wants shape inputs, attributes of the declared kinds
// (sometimes of the wrong kind, sometimes undeclared), values and dims from
// tables that include 0, 1, huge and extreme integers. A node that makes the
// graph invalid is usually dropped and another tried, so most graphs are
// valid and several nodes deep, while some stay invalid to exercise the
// validation itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/choice_source.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/host_tensor.h"
#include "server/graph/plan.h"

namespace npu::fuzz {

struct GeneratorLimits {
  int max_nodes = 6;
  int max_graph_inputs = 3;
  // Graph inputs larger than this are declared but not made (the plan must refuse them).
  uint64_t max_input_bytes = 1 << 14;
  graph::PlanLimits plan{64, 1 << 16};  // what the fuzz target plans with
};

struct FuzzCase {
  std::string preset;                    // a device preset name
  v1::Graph graph;
  std::vector<graph::HostTensor> inputs;  // one per graph input, of its declared type, when runnable
  bool runnable = false;                 // every graph input declared valid and made within the limits
};

FuzzCase GenerateCase(ChoiceSource& src, const GeneratorLimits& limits = {});

}  // namespace npu::fuzz
