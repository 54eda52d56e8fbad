// The operators the server runs. Each op is one OpDef: what it accepts (shape
// and dtype inference, attribute checks) and how it runs (kernels + counted
// work for the device model). Ops are registered by server/graph/ops/builtin_ops.cc.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/graph/host_tensor.h"
#include "server/graph/node_attributes.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

// What inference sees: the node and its inputs' types (nullptr for an omitted
// optional input), and constant values where an input is an initializer.
struct InferContext {
  const v1::Node& node;
  std::vector<const TensorType*> inputs;
  std::vector<const HostTensor*> constants;  // same length as inputs; nullptr when not constant
  NodeAttributes attrs{node};
};

// What a run sees.
struct RunContext {
  const v1::Node& node;
  NodeAttributes attrs{node};
  std::vector<const HostTensor*> inputs;  // nullptr for an omitted optional input
  std::vector<HostTensor> outputs;        // allocated by the executor from inferred types
  const device::DevicePreset& preset;
  device::OpWork work;                    // filled by the op: its tiles, counted as they run
  const std::atomic<bool>* cancel = nullptr;  // set when the caller gave up; long kernels check it per tile
};

struct OpDef {
  std::string name;
  std::string units;                      // Da Vinci units that run it, for the docs ("Cube, FixPipe")
  device::TaskType task_type = device::TaskType::kAiVectorCore;
  std::vector<DataType> dtypes;           // accepted element types, for the docs
  int min_inputs = 1, max_inputs = 1;
  int num_outputs = 1;
  std::function<absl::StatusOr<std::vector<TensorType>>(InferContext&)> infer;
  std::function<absl::Status(RunContext&)> run;
};

class OpRegistry {
 public:
  static OpRegistry& Global();
  void Register(OpDef def);
  const OpDef* Find(absl::string_view name) const;
  std::vector<const OpDef*> All() const;  // sorted by name

 private:
  std::vector<OpDef> ops_;
};

}  // namespace npu::graph
