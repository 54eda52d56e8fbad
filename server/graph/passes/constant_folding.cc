#include "server/graph/passes/constant_folding.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/graph/guarded_call.h"
#include "server/graph/host_tensor.h"
#include "server/graph/node_infer.h"
#include "server/graph/op_registry.h"
#include "server/graph/topo_order.h"

namespace npu::graph {
namespace {

struct Value {
  TensorType type;
  bool is_constant = false;
  HostTensor constant;  // when is_constant
};

class Folder {
 public:
  Folder(v1::Graph& graph, const FoldOptions& options) : graph_(graph), options_(options) {}

  absl::StatusOr<FoldStats> Run() {
    for (const auto& in : graph_.inputs()) {
      auto type = ValidateType(in.dtype(), in.shape(), "input");
      if (type.ok()) values_[in.name()] = Value{*type, false, {}};  // a dynamic dim leaves it unknown
    }
    AddConstants(graph_);
    if (options_.weights != nullptr) AddConstants(*options_.weights);
    std::vector<std::vector<int>> producers;
    if (!ProducersOf(producers)) return FoldStats{};  // malformed: the planner says how
    const TopoOrder sorted = TopologicalOrder(producers);
    if (!sorted.complete()) return FoldStats{};
    std::vector<bool> folded(static_cast<size_t>(graph_.nodes_size()), false);
    for (int i : sorted.order) {
      auto f = Visit(graph_.nodes(i));
      if (!f.ok()) return f.status();
      folded[i] = *f;
    }
    Materialize(folded);
    return stats_;
  }

 private:
  // Initializers whose bytes check out; the others the planner refuses.
  void AddConstants(const v1::Graph& source) {
    for (const auto& init : source.initializers()) {
      auto type = ValidateType(init.tensor().dtype(), init.tensor().shape(), "initializer");
      if (!type.ok() || type->bytes() != init.tensor().data().size()) continue;
      // Not owned: the graphs outlive the pass.
      values_[init.name()] =
          Value{*type, true, HostTensor(*type, nullptr, reinterpret_cast<const std::byte*>(init.tensor().data().data()))};
    }
  }

  // Node i's producers; false when a value is defined twice or a node reads
  // itself (the planner refuses both).
  bool ProducersOf(std::vector<std::vector<int>>& producers) {
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < graph_.nodes_size(); ++i) {
      for (const auto& out : graph_.nodes(i).outputs()) {
        if (out.empty() || values_.contains(out) || !producer.emplace(out, i).second) return false;
      }
    }
    producers.assign(static_cast<size_t>(graph_.nodes_size()), {});
    for (int i = 0; i < graph_.nodes_size(); ++i) {
      for (const auto& in : graph_.nodes(i).inputs()) {
        auto it = producer.find(in);
        if (it == producer.end()) continue;
        if (it->second == i) return false;
        producers[i].push_back(it->second);
      }
    }
    return true;
  }

  // Infers the node; runs it when it can be folded. True when folded.
  absl::StatusOr<bool> Visit(const v1::Node& node) {
    const OpDef* op = OpRegistry::Global().Find(node.op_type());
    if (op == nullptr || !CheckArity(node, *op).ok()) return false;
    std::vector<const TensorType*> types;
    std::vector<const HostTensor*> constants;
    std::vector<HostTensor> placeholders;  // type-only stand-ins for a reads_types_only op's inputs
    placeholders.reserve(static_cast<size_t>(node.inputs_size()));
    bool all_constant = true;
    for (const auto& name : node.inputs()) {
      if (name.empty()) {
        types.push_back(nullptr);
        constants.push_back(nullptr);
        continue;
      }
      auto it = values_.find(name);
      if (it == values_.end()) return false;  // not inferable (yet): a dynamic dim upstream
      types.push_back(&it->second.type);
      constants.push_back(it->second.is_constant ? &it->second.constant : nullptr);
      all_constant = all_constant && it->second.is_constant;
    }
    auto inferred = InferNode(node, *op, types, constants, *options_.preset, options_.max_tensor_bytes);
    if (!inferred.ok()) return false;  // the planner reports it
    for (int j = 0; j < node.outputs_size(); ++j) values_[node.outputs(j)] = Value{inferred->outputs[j], false, {}};
    if (!all_constant && !op->reads_types_only) return false;
    uint64_t bytes = 0;
    for (const TensorType& t : inferred->outputs) bytes += t.bytes();
    if (bytes > options_.max_folded_bytes || stats_.folded_bytes + bytes > options_.max_tensor_bytes) return false;

    if (op->folds_to_constant) {  // its prepared state is its value
      Value& v = values_[node.outputs(0)];
      v.is_constant = true;
      v.constant = *static_cast<const HostTensor*>(inferred->state.get());
      ++stats_.folded_nodes;
      stats_.folded_bytes += bytes;
      return true;
    }
    RunContext ctx{node, NodeAttributes(node), {}, {}, *options_.preset, {}};
    ctx.state = inferred->state.get();
    for (size_t j = 0; j < types.size(); ++j) {
      if (constants[j] != nullptr || types[j] == nullptr) {
        ctx.inputs.push_back(constants[j]);
      } else {
        placeholders.emplace_back(*types[j], nullptr, nullptr);
        ctx.inputs.push_back(&placeholders.back());
      }
    }
    for (const TensorType& t : inferred->outputs) ctx.outputs.push_back(HostTensor::Allocate(t));
    if (!WritesNothing(*op, ctx.outputs)) {
      if (auto s = GuardedCall(node, "folding", [&] { return op->run(ctx); }); !s.ok()) return s;
    }
    for (int j = 0; j < node.outputs_size(); ++j) {
      Value& v = values_[node.outputs(j)];
      v.is_constant = true;
      v.constant = std::move(ctx.outputs[j]);
    }
    ++stats_.folded_nodes;
    stats_.folded_bytes += bytes;
    return true;
  }

  // Folded outputs still read (by a remaining node or as a graph output)
  // become initializers; folded nodes go.
  void Materialize(const std::vector<bool>& folded) {
    if (stats_.folded_nodes == 0) return;
    std::unordered_set<std::string> needed(graph_.outputs().begin(), graph_.outputs().end());
    for (int i = 0; i < graph_.nodes_size(); ++i) {
      if (!folded[i]) needed.insert(graph_.nodes(i).inputs().begin(), graph_.nodes(i).inputs().end());
    }
    google::protobuf::RepeatedPtrField<v1::Node> kept;
    for (int i = 0; i < graph_.nodes_size(); ++i) {
      if (!folded[i]) {
        kept.Add()->Swap(graph_.mutable_nodes(i));
        continue;
      }
      for (const auto& out : graph_.nodes(i).outputs()) {
        if (!needed.contains(out)) continue;
        const HostTensor& t = values_[out].constant;
        v1::Initializer* init = graph_.add_initializers();
        init->set_name(out);
        v1::Tensor* msg = init->mutable_tensor();
        msg->set_dtype(t.type().dtype);
        for (int64_t d : t.type().shape) msg->add_shape(d);
        msg->set_data(reinterpret_cast<const char*>(t.data()), t.bytes());
      }
    }
    graph_.mutable_nodes()->Swap(&kept);
  }

  v1::Graph& graph_;
  const FoldOptions& options_;
  std::unordered_map<std::string, Value> values_;
  FoldStats stats_;
};

}  // namespace

absl::StatusOr<FoldStats> FoldConstants(v1::Graph& graph, const FoldOptions& options) {
  return Folder(graph, options).Run();
}

}  // namespace npu::graph
