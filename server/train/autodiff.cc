#include "server/train/autodiff.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/train/gradient_rules.h"
#include "server/train/value_types.h"

namespace npu::train {
namespace {

class Backward {
 public:
  Backward(v1::Graph& graph, const BackwardRequest& req) : graph_(graph), req_(req), editor_(&graph) {}

  absl::StatusOr<std::vector<std::string>> Run(const device::DevicePreset& preset) {
    // A loss is one value given its gradient (the seed, a scalar).
    std::vector<std::pair<std::string, std::string>> seeds = req_.output_grads;
    if (!req_.loss.empty()) seeds = {{req_.loss, req_.seed}};
    if (seeds.empty()) return absl::InvalidArgumentError("nothing to differentiate: no loss and no output gradients");
    if (graph_.outputs_size() == 0) graph_.add_outputs(seeds[0].first);  // BuildPlan wants one
    auto facts = InferGraphFacts(graph_, preset);
    if (!facts.ok()) return facts.status();
    facts_ = *std::move(facts);
    for (const auto& init : graph_.initializers()) constants_[init.name()] = &init.tensor();
    if (!req_.loss.empty()) {
      auto loss = facts_.types.find(req_.loss);
      if (loss == facts_.types.end()) {
        return absl::InvalidArgumentError(absl::StrCat("the loss \"", req_.loss, "\" is not a value of the graph"));
      }
      if (!graph::IsFloat(loss->second.dtype) || loss->second.elements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("the loss \"", req_.loss, "\" must be one float, not ",
                                                       graph::ToString(loss->second)));
      }
    }
    for (const auto& [value, grad] : seeds) {
      auto t = facts_.types.find(value);
      if (t == facts_.types.end() || !graph::IsFloat(t->second.dtype)) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"", value, "\" is not a float value of the graph, so it has no gradient"));
      }
      needed_.insert(value);
    }
    MarkRequired();
    MarkNeeded();
    for (const auto& [value, grad] : seeds) {
      const graph::TensorType& t = facts_.types.at(value);
      editor_.AddInput(grad, req_.loss.empty() ? t : graph::TensorType{t.dtype, {}});
      contributions_[value].push_back(grad);
    }
    // The rules append nodes: walk the forward's nodes by index, never by pointer.
    const std::vector<int> order = facts_.order;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (auto s = Differentiate(*it); !s.ok()) {
        // Go on, to name every node that cannot be differentiated: its inputs
        // stand in for their own gradients (same types), and nothing built
        // past the first problem is used.
        problems_.push_back(std::string(s.message()));
        const v1::Node& node = graph_.nodes(*it);
        for (const auto& in : node.inputs()) {
          if (!in.empty() && required_.contains(in)) contributions_[in].push_back(in);
        }
      }
    }
    CheckDifferentiablePaths();
    if (problems_.size() == 1) return absl::InvalidArgumentError(problems_[0]);
    if (!problems_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("the model cannot be trained: ", problems_.size(),
                                                     " problems: ", absl::StrJoin(problems_, "; ")));
    }
    std::vector<std::string> grads;
    for (const std::string& w : req_.wrt) grads.push_back(GradientOf(w));
    return grads;
  }

 private:
  void MarkRequired() {
    required_.insert(req_.wrt.begin(), req_.wrt.end());
    for (int i : facts_.order) {
      const v1::Node& n = graph_.nodes(i);
      bool any = false;
      for (const auto& in : n.inputs()) any = any || required_.contains(in);
      if (!any) continue;
      for (const auto& out : n.outputs()) {
        if (graph::IsFloat(facts_.types.at(out).dtype)) required_.insert(out);
      }
    }
  }

  // From what needed_ holds already: the loss, or the values given gradients.
  void MarkNeeded() {
    for (auto it = facts_.order.rbegin(); it != facts_.order.rend(); ++it) {
      const v1::Node& n = graph_.nodes(*it);
      bool any = false;
      for (const auto& out : n.outputs()) any = any || needed_.contains(out);
      if (any) needed_.insert(n.inputs().begin(), n.inputs().end());
    }
  }

  // A value asked for that the loss depends on, but only through ops whose
  // outputs are not float (Shape, comparisons, ArgMax, casts to integers):
  // no gradient can reach it. Names every node where its paths leave the
  // floats.
  void CheckDifferentiablePaths() {
    for (const std::string& w : req_.wrt) {
      if (!needed_.contains(w) || contributions_.contains(w)) continue;
      std::set<std::string> reach = {w};
      std::vector<std::string> cuts;
      for (int i : facts_.order) {
        const v1::Node& n = graph_.nodes(i);
        bool touched = false;
        for (const auto& in : n.inputs()) touched = touched || reach.contains(in);
        if (!touched) continue;
        bool floats = false, leads = false;
        for (const auto& out : n.outputs()) {
          leads = leads || needed_.contains(out);
          if (graph::IsFloat(facts_.types.at(out).dtype)) {
            floats = true;
            reach.insert(out);
          }
        }
        if (leads && !floats) {
          cuts.push_back(absl::StrCat("\"", n.name(), "\" (", n.op_type(), ", output ",
                                      graph::DataTypeName(facts_.types.at(n.outputs(0)).dtype), ")"));
        }
      }
      if (cuts.empty()) continue;  // its float paths pass no gradient (Floor, Sign, ...): a zero gradient
      problems_.push_back(absl::StrCat("\"", w, "\" reaches the loss only through values that are not float, so no "
                                       "gradient reaches it: node ", absl::StrJoin(cuts, ", node ")));
    }
  }

  // The sum of what flowed back into `value` so far ("" when nothing did).
  std::string Sum(const std::string& value) {
    auto it = contributions_.find(value);
    if (it == contributions_.end() || it->second.empty()) return "";
    std::string total = it->second[0];
    for (size_t i = 1; i < it->second.size(); ++i) {
      total = editor_.Add1("Add", {total, it->second[i]}, {}, absl::StrCat("grad/", value, "/sum"));
    }
    it->second = {total};
    return total;
  }

  absl::Status Differentiate(int index) {
    const v1::Node& node = graph_.nodes(index);
    std::vector<std::string> dy;
    bool flows = false;
    for (const auto& out : node.outputs()) {
      dy.push_back(needed_.contains(out) ? Sum(out) : "");
      flows = flows || !dy.back().empty();
    }
    std::vector<bool> needs;
    bool any = false;
    for (const auto& in : node.inputs()) {
      needs.push_back(!in.empty() && required_.contains(in));
      any = any || needs.back();
    }
    if (!flows || !any) return absl::OkStatus();
    const GradRule* rule = FindGradRule(node.op_type());
    if (rule == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node \"", node.name(), "\" (", node.op_type(),
                                                     "): the op has no gradient, so the model cannot be trained "
                                                     "through it"));
    }
    // A missing output gradient is a zero the rule cannot be given: only
    // multi-output ops whose rule reads the first output's reach here, but
    // for those that take any.
    GradContext ctx(editor_, node, facts_.types, constants_, std::move(dy), std::move(needs));
    if (ctx.dy[0].empty() && !OpsTakingAnyOutputGradient().contains(node.op_type())) return absl::OkStatus();
    if (auto s = (*rule)(ctx); !s.ok()) return s;
    for (int i = 0; i < node.inputs_size(); ++i) {
      if (ctx.Needs(i) && !ctx.dx[i].empty()) contributions_[node.inputs(i)].push_back(ctx.dx[i]);
    }
    return absl::OkStatus();
  }

  std::string GradientOf(const std::string& value) {
    std::string g = Sum(value);
    if (!g.empty()) return g;
    const graph::TensorType& t = facts_.types.at(value);
    v1::Tensor zeros;
    zeros.set_dtype(t.dtype);
    for (int64_t d : t.shape) zeros.add_shape(d);
    zeros.mutable_data()->assign(t.bytes(), '\0');
    return editor_.Constant(absl::StrCat("grad/", value, "/zero"), std::move(zeros));
  }

  v1::Graph& graph_;
  const BackwardRequest& req_;
  GraphEditor editor_;
  GraphFacts facts_;
  std::map<std::string, const v1::Tensor*> constants_;
  std::set<std::string> required_, needed_;
  std::map<std::string, std::vector<std::string>> contributions_;
  std::vector<std::string> problems_;  // every node that cannot be differentiated, in reverse order
};

}  // namespace

absl::StatusOr<std::vector<std::string>> AppendBackward(v1::Graph& graph, const BackwardRequest& request,
                                                        const device::DevicePreset& preset) {
  return Backward(graph, request).Run(preset);
}

}  // namespace npu::train
