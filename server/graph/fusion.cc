#include "server/graph/fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/ops/fused_elementwise_op.h"

namespace npu::graph {
namespace {

using kernels::EpilogueOperand;
using kernels::EwStep;

// A chain under construction: its absorbed nodes (after the head), program and operands.
struct Chain {
  std::vector<int> nodes;
  kernels::EwProgram program;
  std::vector<int> operands;  // value ids, program operand order
  std::vector<EpilogueOperand::Kind> kinds;  // Cube chains: how each operand is read
  std::vector<int> internal;  // values produced inside the chain (all but the last)
  int value = -1;             // the chain's current value
  int in_value = -1;          // the value `in` holds; -1: none yet
  std::vector<float> bn_scale, bn_shift;  // a BatchNormalization folded into a Conv
};

class Fuser {
 public:
  Fuser(Plan& plan, const PrepareWithEpilogue& prepare) : plan_(plan), prepare_(prepare) {
    const size_t nv = plan.values.size();
    consumers_.resize(nv);
    is_output_.assign(nv, false);
    for (int v : plan.outputs) is_output_[v] = true;
    for (int k = 0; k < static_cast<int>(plan.nodes.size()); ++k) {
      for (int v : plan.nodes[k].inputs) {
        if (v >= 0 && (consumers_[v].empty() || consumers_[v].back() != k)) consumers_[v].push_back(k);
      }
    }
    absorbed_.assign(plan.nodes.size(), false);
  }

  void Run() {
    const int n = static_cast<int>(plan_.nodes.size());
    std::vector<std::optional<PlanNode>> fused_at(n);  // the fused node placed at a chain's tail
    for (int k = 0; k < n; ++k) {
      if (absorbed_[k]) continue;
      const PlanNode& head = plan_.nodes[k];
      if (head.outputs.size() != 1) continue;
      std::optional<PlanNode> fused;
      Chain chain;
      if (head.op->epilogue_axis != OpDef::kNoEpilogue) {
        fused = CubeChain(k, chain);
      } else if (head.op->fusion_step) {
        fused = VectorChain(k, chain);
      }
      if (!fused) continue;
      absorbed_[k] = true;
      for (int m : chain.nodes) absorbed_[m] = true;
      fused_at[chain.nodes.back()] = std::move(fused);
    }
    std::vector<PlanNode> nodes;
    nodes.reserve(plan_.nodes.size());
    for (int k = 0; k < n; ++k) {
      if (fused_at[k]) {
        nodes.push_back(*std::move(fused_at[k]));
      } else if (!absorbed_[k]) {
        nodes.push_back(std::move(plan_.nodes[k]));
      }
    }
    plan_.nodes = std::move(nodes);
  }

 private:
  const TensorType& TypeOf(int v) const { return plan_.values[v].type; }

  InferContext ContextFor(const PlanNode& pn) const {
    InferContext ctx{*pn.node, {}, {}, NodeAttributes(*pn.node), &plan_.preset, UINT64_MAX, nullptr};
    for (int v : pn.inputs) {
      ctx.inputs.push_back(v < 0 ? nullptr : &plan_.values[v].type);
      ctx.constants.push_back(v >= 0 && plan_.values[v].is_constant ? &plan_.values[v].constant : nullptr);
    }
    return ctx;
  }

  bool InChain(const Chain& c, int head, int node) const {
    return node == head || std::find(c.nodes.begin(), c.nodes.end(), node) != c.nodes.end();
  }

  // How a Cube op's epilogue reads `v`, given the op's output type and column axis.
  std::optional<EpilogueOperand::Kind> CubeOperandKind(int v, const TensorType& out, int axis) const {
    const TensorType& t = TypeOf(v);
    if (t.dtype != out.dtype) return std::nullopt;
    if (t.elements() == 1) return EpilogueOperand::Kind::kScalar;
    if (t.shape == out.shape) return EpilogueOperand::Kind::kLikeC;
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    const int64_t a = axis < 0 ? rank + axis : axis;
    if (a < 0 || a >= rank || static_cast<int64_t>(t.shape.size()) > rank) return std::nullopt;
    // Right-aligned, every dim 1 but the column axis, which is the output's.
    const int64_t pad = rank - static_cast<int64_t>(t.shape.size());
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = d < pad ? 1 : t.shape[static_cast<size_t>(d - pad)];
      if (d == a ? dim != out.shape[static_cast<size_t>(a)] : dim != 1) return std::nullopt;
    }
    return EpilogueOperand::Kind::kPerColumn;
  }

  // Extends `c` with the elementwise nodes that follow it. `cube_axis` is the
  // head's epilogue axis for a Cube chain (operands restricted to what FixPipe
  // reads), or kNoEpilogue for a Vector chain (any broadcast operand).
  void Extend(Chain& c, int head, int cube_axis, size_t max_operands) {
    const bool cube = cube_axis != OpDef::kNoEpilogue;
    const TensorType chain_type = TypeOf(c.value);
    while (!is_output_[c.value]) {
      const std::vector<int>& cons = consumers_[c.value];
      if (cons.empty()) break;
      if (cons.size() > 1) {
        // Read again further on: the value becomes `in`, which the old one may
        // no longer be needed for (a Cube chain's internal values are nowhere else).
        if (c.in_value != c.value) {
          if (cube && c.in_value >= 0 && !AllReadInChain(c, head, c.in_value)) break;
          c.program.steps.push_back(CaptureIn());
          c.in_value = c.value;
        }
      }
      const int next = cons.front();  // the earliest reader
      const PlanNode& pn = plan_.nodes[next];
      if (absorbed_[next] || !pn.op->fusion_step || pn.outputs.size() != 1) break;
      const int out = pn.outputs[0];
      if (!(TypeOf(out) == chain_type)) break;
      int chain_input = -1;
      for (int j = 0; j < static_cast<int>(pn.inputs.size()); ++j) {
        if (pn.inputs[j] == c.value) {
          chain_input = j;
          break;
        }
      }
      std::optional<EwStep> step = pn.op->fusion_step(ContextFor(pn), chain_input);
      if (!step) break;
      if (step->kind == EwStep::Kind::kBinary) {
        const int other = pn.inputs[1 - chain_input];
        if (other == c.in_value) {
          step->operand = EwStep::kIn;
        } else {
          if (other < 0 || std::find(c.internal.begin(), c.internal.end(), other) != c.internal.end() ||
              other == c.value) {
            break;  // an earlier value of the chain that `in` no longer holds
          }
          auto at = std::find(c.operands.begin(), c.operands.end(), other);
          if (at == c.operands.end()) {
            if (c.operands.size() == max_operands) break;
            if (cube) {
              auto kind = CubeOperandKind(other, chain_type, cube_axis);
              if (!kind) break;
              c.kinds.push_back(*kind);
            }
            c.operands.push_back(other);
            at = c.operands.end() - 1;
          }
          step->operand = static_cast<int>(at - c.operands.begin());
        }
      }
      c.program.steps.push_back(*step);
      c.program.steps.push_back(Store(TypeOf(out)));
      c.internal.push_back(c.value);
      c.nodes.push_back(next);
      c.value = out;
    }
    // The fused node's own store rounds and counts the last value.
    if (!c.nodes.empty()) c.program.steps.pop_back();
    c.program.operands = static_cast<int>(c.operands.size());
  }

  static EwStep CaptureIn() {
    EwStep s;
    s.kind = EwStep::Kind::kCaptureIn;
    return s;
  }

  static EwStep Store(const TensorType& t) {
    EwStep s;
    s.kind = EwStep::Kind::kStore;
    s.fp16 = t.dtype == v1::FLOAT16;
    return s;
  }

  bool AllReadInChain(const Chain& c, int head, int v) const {
    return std::all_of(consumers_[v].begin(), consumers_[v].end(), [&](int k) { return InChain(c, head, k); });
  }

  // Every value made inside the chain is read only by it (an `in` whose later
  // readers left the chain fails here).
  bool Closed(const Chain& c, int head) const {
    return std::all_of(c.internal.begin(), c.internal.end(), [&](int v) { return AllReadInChain(c, head, v); });
  }

  // A BatchNormalization reading a Conv's output alone, its parameters and the
  // Conv's weights and bias constant: folded into the Conv (its value becomes
  // the chain's).
  void FoldBatchNorm(Chain& c, int head) {
    const PlanNode& conv = plan_.nodes[head];
    if (conv.op->name != "Conv" || is_output_[c.value] || consumers_[c.value].size() != 1) return;
    const int next = consumers_[c.value].front();
    const PlanNode& bn = plan_.nodes[next];
    if (bn.op->name != "BatchNormalization" || bn.outputs.size() != 1 || bn.inputs[0] != c.value) return;
    // Training mode normalises with the batch's statistics: nothing to fold.
    if (NodeAttributes(*bn.node).Int("training_mode", 0).value_or(0) != 0) return;
    auto constant = [&](int v) { return v >= 0 && plan_.values[v].is_constant; };
    for (int i = 1; i < 5; ++i) {
      if (!constant(bn.inputs[i])) return;
    }
    if (!constant(conv.inputs[1]) || (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !constant(conv.inputs[2]))) {
      return;
    }
    const int64_t channels = TypeOf(c.value).shape[1];
    std::vector<float> p[4];
    for (int i = 0; i < 4; ++i) {
      p[i].resize(static_cast<size_t>(channels));
      LoadAsFloat(plan_.values[bn.inputs[i + 1]].constant, 0, 1, channels, p[i].data());
    }
    const float eps = NodeAttributes(*bn.node).Float("epsilon", 1e-5f).value_or(1e-5f);
    c.bn_scale.resize(static_cast<size_t>(channels));
    c.bn_shift.resize(static_cast<size_t>(channels));
    for (int64_t ch = 0; ch < channels; ++ch) {
      // As BatchNormalization computes them: y = x * a + b.
      c.bn_scale[ch] = p[0][ch] / std::sqrt(p[3][ch] + eps);
      c.bn_shift[ch] = p[1][ch] - p[2][ch] * c.bn_scale[ch];
    }
    c.internal.push_back(c.value);
    c.nodes.push_back(next);
    c.value = bn.outputs[0];
  }

  std::optional<PlanNode> CubeChain(int head, Chain& c) {
    const PlanNode& pn = plan_.nodes[head];
    c.value = pn.outputs[0];
    if (!IsFloat(TypeOf(c.value).dtype)) return std::nullopt;
    FoldBatchNorm(c, head);
    // The head's result as the unfused graph stored it, then the chain.
    c.program.steps.push_back(Store(TypeOf(c.value)));
    const size_t folded = c.nodes.size();
    Extend(c, head, pn.op->epilogue_axis, kernels::kMaxEpilogueOperands);
    if (c.nodes.size() == folded) {
      c.program.steps.clear();  // only a BatchNormalization (or nothing) was absorbed
    }
    if (c.nodes.empty() || !Closed(c, head)) return std::nullopt;
    PlanNode fused = pn;
    fused.inputs.resize(static_cast<size_t>(pn.op->max_inputs), -1);
    for (int v : c.operands) fused.inputs.push_back(v);
    fused.outputs = {c.value};
    for (int m : c.nodes) fused.fused.push_back(plan_.nodes[m].node);
    FusedEpilogue e;
    e.program = c.program;
    e.first_operand = pn.op->max_inputs;
    e.kinds = c.kinds;
    e.channel_scale = std::move(c.bn_scale);
    e.channel_shift = std::move(c.bn_shift);
    if (!prepare_(fused, e).ok()) return std::nullopt;  // the op cannot take this epilogue: leave it unfused
    return fused;
  }

  std::optional<PlanNode> VectorChain(int head, Chain& c) {
    const PlanNode& pn = plan_.nodes[head];
    const TensorType& out_type = TypeOf(pn.outputs[0]);
    if (!IsFloat(out_type.dtype)) return std::nullopt;
    // The chain starts from an input of the output's own shape and type.
    int start = -1;
    for (int j = 0; j < static_cast<int>(pn.inputs.size()) && j < 2; ++j) {
      if (pn.inputs[j] >= 0 && TypeOf(pn.inputs[j]) == out_type) {
        start = j;
        break;
      }
    }
    if (start < 0) return std::nullopt;
    std::optional<EwStep> step = pn.op->fusion_step(ContextFor(pn), start);
    if (!step) return std::nullopt;
    const int x = pn.inputs[start];
    c.in_value = x;
    c.program.steps.push_back(CaptureIn());
    if (step->kind == EwStep::Kind::kBinary) {
      const int other = pn.inputs[1 - start];
      if (other == x) {
        step->operand = EwStep::kIn;
      } else {
        c.operands.push_back(other);
        step->operand = 0;
      }
    }
    c.program.steps.push_back(*step);
    c.program.steps.push_back(Store(out_type));
    c.value = pn.outputs[0];
    Extend(c, head, OpDef::kNoEpilogue, ops::FusedElementwiseOp().max_inputs - 1);
    if (c.nodes.empty() || !Closed(c, head)) return std::nullopt;
    PlanNode fused;
    fused.node = pn.node;
    fused.op = &ops::FusedElementwiseOp();
    fused.inputs = {x};
    for (int v : c.operands) fused.inputs.push_back(v);
    fused.outputs = {c.value};
    for (int m : c.nodes) fused.fused.push_back(plan_.nodes[m].node);
    ops::FusedElementwisePlan state;
    state.program = c.program;
    state.passes = 0;
    for (const EwStep& s : c.program.steps) {
      if (s.kind == EwStep::Kind::kUnary) state.passes += device::VectorPasses(device::KernelOf(s.unary));
      if (s.kind == EwStep::Kind::kBinary) state.passes += device::VectorPasses(device::KernelOf(s.binary));
    }
    fused.state = std::make_shared<const ops::FusedElementwisePlan>(std::move(state));
    return fused;
  }

  Plan& plan_;
  const PrepareWithEpilogue& prepare_;
  std::vector<std::vector<int>> consumers_;  // per value: the nodes that read it, in plan order
  std::vector<bool> is_output_;
  std::vector<bool> absorbed_;
};

}  // namespace

void FuseChains(Plan& plan, const PrepareWithEpilogue& prepare) { Fuser(plan, prepare).Run(); }

}  // namespace npu::graph
