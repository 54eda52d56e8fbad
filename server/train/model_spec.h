// What a trainer learns from the forward model it is given: its one data
// input and one output, the float initializers it trains (parameters) and
// the ones BatchNormalization keeps up to date (running statistics).
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/tensor_type.h"

namespace npu::train {

struct ModelSpec {
  v1::Graph graph;                   // the forward as given; every node named
  std::string input, output;         // the data input (batch first) and the prediction
  std::vector<std::string> params;   // trained float initializers, in graph order
  std::vector<std::string> buffers;  // BatchNormalization running mean and variance
  std::vector<std::string> bn_params;  // parameters BatchNormalization reads (kept fp32 by O2)
};

// `trainable` names the parameters; empty means every float initializer
// except the running statistics. INVALID_ARGUMENT names what is wrong: not
// exactly one input and one output, a trainable name that is no float
// initializer, a graph without parameters.
absl::StatusOr<ModelSpec> DescribeModel(v1::Graph graph, const std::vector<std::string>& trainable = {});

// Names every node that has no name ("Op_INDEX"): the training passes need names.
void NameNodes(v1::Graph& graph);

// What BatchNormalization nodes read as inputs `which` (1, 2: scale and
// bias; 3, 4: the running mean and variance).
std::set<std::string> BatchNormInputs(const v1::Graph& graph, std::initializer_list<int> which);
inline std::set<std::string> RunningStatistics(const v1::Graph& graph) { return BatchNormInputs(graph, {3, 4}); }

// The initializer `name` of the graph (nullptr when there is none).
const v1::Initializer* FindInitializer(const v1::Graph& graph, const std::string& name);

// An initializer's type.
graph::TensorType TypeOf(const v1::Tensor& t);

}  // namespace npu::train
