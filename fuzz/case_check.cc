#include "fuzz/case_check.h"

#include <cstring>
#include <unordered_map>
#include <vector>

#include <google/protobuf/text_format.h>

#include "absl/strings/str_cat.h"
#include "fuzz/op_reference.h"
#include "server/device/fresh_memory_fill.h"
#include "server/graph/runner.h"

namespace npu::fuzz {
namespace {

constexpr size_t kMaxStatusBytes = 4096;  // what a status may carry (server/rpc/grpc_status.h)

// Empty when `s` is OK or an error a client can read and act on.
std::string CheckStatus(const absl::Status& s, const char* phase) {
  if (s.ok()) return "";
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented: break;
    default: return absl::StrCat(phase, " failed with ", s.ToString().substr(0, 2000));
  }
  if (s.message().empty()) return absl::StrCat(phase, " failed with ", absl::StatusCodeToString(s.code()),
                                               " and no message");
  if (s.message().size() > kMaxStatusBytes) {
    return absl::StrCat(phase, " failed with a message of ", s.message().size(), " bytes: ",
                        s.message().substr(0, 300));
  }
  return "";
}

// The values of `plan` that depend on a read of the float-status register
// (NPUGetFloatStatus): it counts what the run's earlier nodes overflowed, so
// another plan of the graph (fused, its dead nodes dropped) may read another
// count. Indexed by value id.
std::vector<bool> ReadTheFloatStatus(const graph::Plan& plan) {
  std::vector<bool> reads(plan.values.size(), false);
  for (const graph::PlanNode& pn : plan.nodes) {  // in topological order
    bool r = pn.node->op_type() == "NPUGetFloatStatus";
    for (int id : pn.inputs) r = r || (id >= 0 && reads[id]);
    for (int id : pn.outputs) reads[id] = r;
  }
  return reads;
}

bool SameBytes(const graph::HostTensor& a, const graph::HostTensor& b) {
  return a.type() == b.type() && (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

}  // namespace

device::Device& CaseChecker::DeviceFor(const std::string& preset) {
  auto& d = devices_[preset];
  if (d == nullptr) {
    device::DeviceOptions o;
    o.omp_threads = 1;
    o.max_queue = 4;
    d = std::make_unique<device::Device>(static_cast<int>(devices_.size()) - 1, *device::PresetByName(preset), o);
  }
  return *d;
}

CaseOutcome CaseChecker::Check(const FuzzCase& c, const GeneratorLimits& generated_with) {
  CaseOutcome out;
  auto preset = device::PresetByName(c.preset);
  if (!preset.ok()) {
    out.finding = absl::StrCat("unknown preset ", c.preset);
    return out;
  }
  auto graph = std::make_shared<v1::Graph>(c.graph);
  auto fused_or = graph::BuildPlan(graph, *preset, generated_with.plan);
  auto plan_or = graph::BuildPlan(graph, *preset, generated_with.plan, graph::PlanOptions{false});
  if (!plan_or.ok() || !fused_or.ok()) {
    out.status = plan_or.ok() ? fused_or.status() : plan_or.status();
    out.finding = CheckStatus(out.status, "planning");
    if (out.finding.empty() && plan_or.ok() != fused_or.ok()) {
      out.finding = absl::StrCat("planning with fusion gave ", fused_or.status().ToString(), ", without ",
                                 plan_or.status().ToString());
    }
    return out;
  }
  out.planned = true;
  // The run the server makes (fused) against a debug run of the plain plan,
  // whose every node is one of the graph's and keeps its output.
  const std::shared_ptr<const graph::Plan> fused = *fused_or;
  const std::shared_ptr<const graph::Plan> plan = *plan_or;
  // Folding a BatchNormalization into a Conv's weights rounds them differently
  // (fusion.h): that plan's outputs are not bitwise those of the plain plan.
  bool folded = false;
  for (const graph::PlanNode& pn : fused->nodes) {
    for (const v1::Node* n : pn.fused) folded = folded || n->op_type() == "BatchNormalization";
  }
  if (!c.runnable || plan->value_bytes > limits_.max_run_bytes || c.inputs.size() != plan->inputs.size()) return out;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!(c.inputs[i].type() == plan->values[plan->inputs[i]].type)) return out;  // declared types differ: not run
  }
  device::Device& device = DeviceFor(c.preset);

  graph::ExecOptions profiled, debug;
  profiled.profile = true;
  debug.debug = true;
  device::SetFreshMemoryFillForTesting(0xA5);
  auto arena_run = graph::RunPlan(fused, c.inputs, profiled, device);
  device::SetFreshMemoryFillForTesting(0x5A);
  auto debug_run = graph::RunPlan(plan, c.inputs, debug, device);
  device::SetFreshMemoryFillForTesting(-1);
  if (!arena_run.ok() || !debug_run.ok()) {
    out.status = arena_run.ok() ? debug_run.status() : arena_run.status();
    out.finding = CheckStatus(arena_run.status(), "the run");
    if (out.finding.empty()) out.finding = CheckStatus(debug_run.status(), "the debug run");
    if (out.finding.empty() && arena_run.ok() != debug_run.ok()) {
      out.finding = absl::StrCat("the arena run gave ", arena_run.status().ToString(), ", the debug run ",
                                 debug_run.status().ToString());
    }
    return out;
  }
  out.ran = true;
  out.fused = fused->fused;
  const std::vector<bool> read_the_float_status = ReadTheFloatStatus(*plan);

  if (arena_run->outputs.size() != plan->outputs.size() || debug_run->outputs.size() != plan->outputs.size()) {
    out.finding = absl::StrCat("the run returned ", arena_run->outputs.size(), " outputs for ", plan->outputs.size());
    return out;
  }
  for (size_t i = 0; i < plan->outputs.size(); ++i) {
    const graph::PlanValue& v = plan->values[plan->outputs[i]];
    if (!(arena_run->outputs[i].type() == v.type)) {
      out.finding = absl::StrCat("output ", v.name, " is ", graph::ToString(arena_run->outputs[i].type()),
                                 ", inferred ", graph::ToString(v.type));
      return out;
    }
    if (!folded && !read_the_float_status[plan->outputs[i]] &&
        !SameBytes(arena_run->outputs[i], debug_run->outputs[i])) {
      out.finding = absl::StrCat("output ", v.name, " differs between the run", fused->fused ? " (fused)" : "",
                                 " and a debug run (fresh memory filled with different bytes",
                                 fused->fused ? ", no fusion" : "", ")");
      return out;
    }
  }

  std::unordered_map<std::string, const graph::HostTensor*> produced;
  for (const auto& [name, t] : debug_run->intermediates) produced[name] = &t;
  std::unordered_map<int, const graph::HostTensor*> graph_inputs;
  for (size_t i = 0; i < plan->inputs.size(); ++i) graph_inputs[plan->inputs[i]] = &c.inputs[i];
  for (const graph::PlanNode& pn : plan->nodes) {
    for (int id : pn.outputs) {
      auto it = produced.find(plan->values[id].name);
      if (it == produced.end() || !(it->second->type() == plan->values[id].type)) {
        out.finding = absl::StrCat("node ", pn.node->name(), " output ", plan->values[id].name,
                                   it == produced.end() ? " is missing from the debug run"
                                                        : " has another type than inferred: " +
                                                              graph::ToString(it->second->type()) + " vs " +
                                                              graph::ToString(plan->values[id].type));
        return out;
      }
    }
    std::vector<const graph::HostTensor*> ins;
    for (int id : pn.inputs) {
      const graph::HostTensor* t = nullptr;
      if (id >= 0) {
        const graph::PlanValue& v = plan->values[id];
        if (v.is_constant) {
          t = &v.constant;
        } else if (v.producer < 0) {
          t = graph_inputs[id];
        } else {
          t = produced[v.name];
        }
      }
      ins.push_back(t);
    }
    const graph::PlanValue& out0 = plan->values[pn.outputs[0]];
    auto ref = ReferenceFor(*pn.node, ins, out0.type, preset->fp16_saturation);
    if (!ref) continue;
    ++out.nodes_referenced;
    std::string diff = CompareToReference(*produced[out0.name], *ref);
    if (!diff.empty()) {
      out.finding = absl::StrCat("node ", pn.node->name(), " (", pn.node->op_type(), ") on ", c.preset, ": ", diff);
      return out;
    }
  }
  return out;
}

std::string DescribeCase(const FuzzCase& c) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(c.graph, &text);
  if (text.size() > 20000) text = text.substr(0, 20000) + "\n...";
  std::string s = absl::StrCat("preset: ", c.preset, "\nrunnable: ", c.runnable, "\n", text);
  for (const auto& t : c.inputs) absl::StrAppend(&s, "input ", graph::ToString(t.type()), "\n");
  return s;
}

}  // namespace npu::fuzz
