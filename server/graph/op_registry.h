// The operators the server runs. Each op is one OpDef: what it accepts (shape
// and dtype inference, attribute checks) and how it runs (kernels + counted
// work for the device model). Ops are registered by server/graph/ops/builtin_ops.cc.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/elementwise_program.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/graph/fused_epilogue.h"
#include "server/graph/host_tensor.h"
#include "server/graph/node_attributes.h"
#include "server/graph/tensor_type.h"

namespace npu::device {
class CollectiveGroup;
}  // namespace npu::device

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
  // Set by the fusion pass for an op with OpDef::epilogue_axis: the chain it is
  // to absorb. Its prepare keeps what the runs need (the program, BatchNorm
  // folded into the weights); the inferred types are the op's own.
  const FusedEpilogue* epilogue = nullptr;

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
  uint64_t ready_cycle = 0;   // device cycle the node's inputs are ready (its earliest start)
  uint64_t float_status = 0;  // results the run's earlier nodes overflowed (NPUGetFloatStatus reads it)
  // The run's collective group and this device's rank in it (ExecOptions);
  // null outside a data-parallel step. HcclAllReduce meets the other ranks there.
  device::CollectiveGroup* collective = nullptr;
  int rank = 0;

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
  // starts, ...): INT64/INT32 lists that must be initializers (ConstantInts);
  // also Range's scalars and Resize's FLOAT32 scales.
  std::vector<int> shape_inputs;
  // >= 0: output 0 is a view of this input's bytes (Reshape, Identity, ...);
  // the run sets it and the planner keeps the input's buffer alive for it.
  int output_aliases_input = -1;
  // The op reads only its inputs' types, never their values (Shape): import-time
  // constant folding (passes/constant_folding.h) runs it once those are known.
  bool reads_types_only = false;
  std::function<absl::StatusOr<std::vector<TensorType>>(InferContext&)> infer;
  std::function<absl::Status(RunContext&)> run;

  // Fusion (fusion.h). An elementwise op that can join a fused chain: the step
  // it is in the chain's program, given which input carries the chain's value
  // (binary steps read the other input as the program's operand), or nullopt
  // when this node cannot join (say, a Clip whose bounds are not constants).
  std::function<std::optional<kernels::EwStep>(const InferContext& c, int chain_input)> fusion_step;
  // A Cube op whose FixPipe applies a fused epilogue (InferContext::epilogue):
  // the output axis whose index an operand read once per output column varies
  // along (Conv: 1, the channels; MatMul, Gemm: -1, the last). kNoEpilogue:
  // the op takes none.
  static constexpr int kNoEpilogue = -1000;
  int epilogue_axis = kNoEpilogue;
  // The op's prepared state is its output's value (a HostTensor), known at plan
  // time (Constant): the planner makes the output a constant and no run
  // executes the node.
  bool folds_to_constant = false;
};

// A run of `op` with these outputs has nothing to compute: every output is
// empty. The executor and constant folding call no kernel then: an empty
// tensor's other dims may be huge ([0, 2^31 - 1, 3] holds no bytes but 6.4 G
// empty rows) and kernels loop over an axis's rows. A collective still runs:
// every rank of its group must join it.
bool WritesNothing(const OpDef& op, const std::vector<HostTensor>& outputs);

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
