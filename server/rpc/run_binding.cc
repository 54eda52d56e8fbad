#include "server/rpc/run_binding.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/graph/passes/shape_binding.h"
#include "server/rpc/tensor_codec.h"

namespace npu::rpc {

absl::StatusOr<std::vector<graph::HostTensor>> ResolveInputs(const std::vector<v1::ValueInfo>& declared,
                                                             const v1::RunRequest& req, const std::string& tenant,
                                                             const device::Device& device, core::TensorStore& store) {
  std::unordered_map<std::string, const v1::RunInput*> given;
  for (const auto& in : req.inputs()) {
    if (!given.emplace(in.name(), &in).second) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(in.name()), " is given more than once"));
    }
  }
  std::vector<graph::HostTensor> inputs;
  for (const v1::ValueInfo& value : declared) {
    auto it = given.find(value.name());
    if (it == given.end()) {
      return absl::InvalidArgumentError(absl::StrCat("graph input ", graph::Quoted(value.name()), " (",
                                                     graph::DeclaredTypeString(value), ") is not given"));
    }
    if (auto s = graph::ValidateDeclared(value, absl::StrCat("graph input ", graph::Quoted(value.name())));
        !s.ok()) {
      return s;
    }
    const v1::RunInput& in = *it->second;
    given.erase(it);
    const std::string what = absl::StrCat("input ", graph::Quoted(value.name()));
    graph::HostTensor t;
    switch (in.source_case()) {
      case v1::RunInput::kTensor: {
        auto viewed = ViewTensor(in.tensor(), what);
        if (!viewed.ok()) return viewed.status();
        t = std::move(*viewed);
        break;
      }
      case v1::RunInput::kHandle: {
        auto stored = store.Get(tenant, in.handle());
        if (!stored.ok()) return absl::NotFoundError(absl::StrCat(what, ": ", stored.status().message()));
        if (stored->device != &device) {
          return absl::InvalidArgumentError(absl::StrCat(what, ": handle ", graph::Quoted(in.handle()), " is on ",
                                                         stored->device->id(), ", the run is on ", device.id()));
        }
        t = std::move(stored->tensor);
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat(what, " has neither a tensor nor a handle"));
    }
    if (auto s = graph::CheckFits(value, t.type()); !s.ok()) return s;
    inputs.push_back(std::move(t));
  }
  if (!given.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", graph::Quoted(given.begin()->first), " is not an input of the graph"));
  }
  return inputs;
}

std::vector<graph::TensorType> TypesOf(const std::vector<graph::HostTensor>& inputs) {
  std::vector<graph::TensorType> types;
  for (const graph::HostTensor& t : inputs) types.push_back(t.type());
  return types;
}

absl::StatusOr<RunBinding> BindInputs(const graph::Plan& plan, std::vector<graph::HostTensor> inputs,
                                      const v1::RunRequest& req) {
  RunBinding b;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const graph::PlanValue& value = plan.values[plan.inputs[i]];
    if (i >= inputs.size() || !(inputs[i].type() == value.type)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(value.name), " is ",
                                                     i < inputs.size() ? ToString(inputs[i].type()) : "missing",
                                                     "; the graph declares ", ToString(value.type)));
    }
  }
  b.inputs = std::move(inputs);
  b.keep_on_device.assign(plan.outputs.size(), req.options().keep_all_on_device());
  for (const auto& name : req.options().keep_on_device()) {
    bool found = false;
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
      if (plan.values[plan.outputs[i]].name == name) b.keep_on_device[i] = found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat("keep_on_device names ", graph::Quoted(name),
                                                     ", which is not an output of the graph"));
    }
  }
  return b;
}

absl::StatusOr<RunBinding> BindRun(const graph::Plan& plan, const v1::RunRequest& req, const std::string& tenant,
                                   const device::Device& device, core::TensorStore& store) {
  std::vector<v1::ValueInfo> declared;
  for (int v : plan.inputs) {
    v1::ValueInfo& info = declared.emplace_back();
    info.set_name(plan.values[v].name);
    info.set_dtype(plan.values[v].type.dtype);
    for (int64_t d : plan.values[v].type.shape) info.add_shape(d);
  }
  auto inputs = ResolveInputs(declared, req, tenant, device, store);
  if (!inputs.ok()) return inputs.status();
  return BindInputs(plan, *std::move(inputs), req);
}

}  // namespace npu::rpc
