// The operators the server runs. Each op is one OpDef: what it accepts (shape
// and dtype inference, attribute checks) and how it runs (kernels + counted
// work for the device model). Ops are registered by server/graph/ops/builtin_ops.cc.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
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
//
// Inference is also the op's *prepare* step (TFLite's init/prepare): whatever
// can be known before a run is derived here, once per plan, and kept with
// Prepare(); every run reads it back with RunContext::State<T>() and only binds
// buffers. The pattern every op follows (matmul_op.cc, conv_op.cc are the
// models; the Cube ops' shared pieces are in ops/cube_problem.h):
//
//   struct FooPlan { FooAttrs attrs; Dims dims; kernels::CubeTileShape tile;
//                    std::shared_ptr<const kernels::PackedCubeB> weights; };
//   infer:  check attributes and types, compute dims, plan the tiling for
//           *c.preset (checked against its buffers: an error here refuses the
//           graph when it is planned), pack or convert constant inputs
//           (c.constants[i]), then c.Prepare(FooPlan{...}) and return the types
//   run:    const FooPlan& plan = ctx.State<FooPlan>(); bind ctx.inputs and
//           ctx.outputs to the kernels; record the work per tile; no parsing,
//           no shape arithmetic that can fail, no allocation per node
//
// The state is immutable and shared by concurrent runs of the plan (runs on
// several devices of one preset), so it holds no per-run scratch.
struct InferContext {
  const v1::Node& node;
  std::vector<const TensorType*> inputs;
  std::vector<const HostTensor*> constants;  // same length as inputs; nullptr when not constant
  NodeAttributes attrs{node};
  const device::DevicePreset* preset = nullptr;  // the device the plan is for; set by the planner
  // The planner checks every output against this; a buffer an op sizes itself
  // for its runs (Conv's img2col columns) is checked by the op's infer.
  uint64_t max_tensor_bytes = UINT64_MAX;
  std::shared_ptr<const void> state;              // out: per-node state for the runs (see Prepare)

  template <typename T>
  void Prepare(T value) {
    state = std::make_shared<const T>(std::move(value));
  }
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
  const void* state = nullptr;                // what the op's infer kept with InferContext::Prepare

  // The state of type T that this op's infer prepared (it must have).
  template <typename T>
  const T& State() const {
    return *static_cast<const T*>(state);
  }
};

struct OpDef {
  std::string name;
  std::string units;                      // Da Vinci units that run it, for the docs ("Cube, FixPipe")
  device::TaskType task_type = device::TaskType::kAiVectorCore;
  std::vector<DataType> dtypes;           // accepted element types, for the docs
  int min_inputs = 1, max_inputs = 1;
  // Inputs past min_inputs are optional (an empty name omits one) unless the op
  // is variadic (Concat): then they are more of the same and none may be empty.
  bool variadic = false;
  int num_outputs = 1;
  // Every attribute the op reads (node_attributes.h): the planner refuses any
  // other, or a declared one of another kind or choice, before `infer` runs.
  std::vector<AttrDef> attributes;
  // Inputs whose values decide an output's shape (Reshape's shape, Slice's
  // starts, ...): INT64/INT32 lists that must be initializers (ConstantInts).
  std::vector<int> shape_inputs;
  // >= 0: output 0 is a view of this input's bytes (Reshape, Identity, ...);
  // the run sets it and the planner keeps the input's buffer alive for it.
  int output_aliases_input = -1;
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
  std::deque<OpDef> ops_;  // a deque: registering more never moves the OpDefs plans point at
};

}  // namespace npu::graph
