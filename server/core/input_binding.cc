#include "server/core/input_binding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/graph/passes/shape_binding.h"

namespace npu::core {
namespace {

std::string DTypeName(const BindSubject& subject, v1::DataType dtype) {
  return subject.dtype_name != nullptr ? subject.dtype_name(dtype) : graph::DataTypeName(dtype);
}

std::string Describe(const BindSubject& subject, const graph::TensorType& t) {
  return absl::StrCat(DTypeName(subject, t.dtype), graph::ShapeToString(t.shape));
}

bool Fits(const v1::ValueInfo& declared, const graph::TensorType& given) {
  if (given.dtype != declared.dtype() || static_cast<int>(given.shape.size()) != declared.shape_size()) return false;
  for (int i = 0; i < declared.shape_size(); ++i) {
    if (declared.shape(i) != graph::kDynamicDim && declared.shape(i) != given.shape[i]) return false;
  }
  return true;
}

template <typename Named>
std::string Names(const std::vector<Named>& values) {
  return absl::StrJoin(values, ", ", [](std::string* out, const Named& v) { out->append(v.name()); });
}

absl::StatusOr<graph::HostTensor> FromHandle(const RequestInput& in, const std::string& what, const std::string& tenant,
                                             const device::Device& device, TensorStore& store) {
  auto stored = store.Get(tenant, in.handle);
  if (!stored.ok()) return absl::NotFoundError(absl::StrCat(what, ": ", stored.status().message()));
  if (stored->device != &device) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": handle ", graph::Quoted(in.handle), " is on ",
                                                   stored->device->id(), ", the run is on ", device.id()));
  }
  return std::move(stored->tensor);
}

}  // namespace

std::string DescribeDeclared(const BindSubject& subject, const v1::ValueInfo& declared) {
  return absl::StrCat(DTypeName(subject, declared.dtype()), "[", absl::StrJoin(declared.shape(), ","), "]");
}

absl::StatusOr<std::vector<graph::HostTensor>> BindInputs(const std::vector<v1::ValueInfo>& declared,
                                                          std::vector<RequestInput>& given, const BindSubject& subject,
                                                          const std::string& tenant, const device::Device& device,
                                                          TensorStore& store) {
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> match(declared.size(), kNone);
  for (size_t i = 0; i < given.size(); ++i) {
    size_t k = 0;
    while (k < declared.size() && declared[k].name() != given[i].name) ++k;
    if (k == declared.size()) {
      return absl::InvalidArgumentError(absl::StrCat(subject.name, " has no input ", graph::Quoted(given[i].name),
                                                     " (inputs: ", Names(declared), ")"));
    }
    if (match[k] != kNone) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(given[i].name), " is given twice"));
    }
    match[k] = i;
  }
  std::vector<graph::HostTensor> bound;
  bound.reserve(declared.size());
  for (size_t k = 0; k < declared.size(); ++k) {
    const v1::ValueInfo& value = declared[k];
    const std::string what = absl::StrCat("input ", graph::Quoted(value.name()));
    if (match[k] == kNone) {
      return absl::InvalidArgumentError(absl::StrCat(what, " of ", subject.name, " is missing; it takes ",
                                                     DescribeDeclared(subject, value)));
    }
    if (auto s = graph::ValidateDeclared(value, absl::StrCat(subject.name, "'s ", what)); !s.ok()) return s;
    RequestInput& in = given[match[k]];
    absl::StatusOr<graph::HostTensor> t =
        in.handle.empty() ? absl::StatusOr<graph::HostTensor>(std::move(in.tensor))
                          : FromHandle(in, what, tenant, device, store);
    if (!t.ok()) return t.status();
    if (!Fits(value, t->type())) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is ", Describe(subject, t->type()), "; ", subject.name,
                                                     " takes ", DescribeDeclared(subject, value)));
    }
    bound.push_back(*std::move(t));
  }
  return bound;
}

absl::Status CheckPlanInputs(const graph::Plan& plan, const std::vector<graph::HostTensor>& inputs,
                             const BindSubject& subject) {
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const graph::PlanValue& value = plan.values[plan.inputs[i]];
    if (i >= inputs.size() || !(inputs[i].type() == value.type)) {
      const std::string given = i < inputs.size() ? Describe(subject, inputs[i].type()) : "missing";
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(value.name), " is ", given, "; ",
                                                     subject.name, " takes ", Describe(subject, value.type)));
    }
  }
  return absl::OkStatus();
}

std::vector<graph::TensorType> TypesOf(const std::vector<graph::HostTensor>& inputs) {
  std::vector<graph::TensorType> types;
  types.reserve(inputs.size());
  for (const graph::HostTensor& t : inputs) types.push_back(t.type());
  return types;
}

std::vector<v1::ValueInfo> DeclaredInputs(const graph::Plan& plan) {
  std::vector<v1::ValueInfo> declared;
  for (int v : plan.inputs) {
    v1::ValueInfo& info = declared.emplace_back();
    info.set_name(plan.values[v].name);
    info.set_dtype(plan.values[v].type.dtype);
    for (int64_t d : plan.values[v].type.shape) info.add_shape(d);
  }
  return declared;
}

absl::StatusOr<OutputSelection> SelectOutputs(const graph::Plan& plan, const std::vector<RequestOutput>& requested,
                                              const std::vector<std::string>& keep_on_device, bool keep_all,
                                              const BindSubject& subject) {
  auto output_names = [&plan] {
    return absl::StrJoin(plan.outputs, ", ", [&plan](std::string* out, int v) { out->append(plan.values[v].name); });
  };
  auto find = [&plan](const std::string& name) {
    size_t k = 0;
    while (k < plan.outputs.size() && plan.values[plan.outputs[k]].name != name) ++k;
    return k;
  };
  OutputSelection s;
  if (requested.empty()) {
    for (size_t k = 0; k < plan.outputs.size(); ++k) s.outputs.push_back(k);
  }
  for (const RequestOutput& out : requested) {
    const size_t k = find(out.name);
    if (k == plan.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(subject.name, " has no output ", graph::Quoted(out.name),
                                                     " (outputs: ", output_names(), ")"));
    }
    for (size_t p : s.outputs) {
      if (p == k) {
        return absl::InvalidArgumentError(absl::StrCat("output ", graph::Quoted(out.name), " is requested twice"));
      }
    }
    s.outputs.push_back(k);
  }
  s.keep_on_device.assign(s.outputs.size(), keep_all);
  for (const std::string& name : keep_on_device) {
    const size_t k = find(name);
    bool found = false;
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      if (s.outputs[i] == k) s.keep_on_device[i] = found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat("keep_on_device names ", graph::Quoted(name),
                                                     ", which is not an output of ", subject.name, " (outputs: ",
                                                     output_names(), ")"));
    }
  }
  return s;
}

}  // namespace npu::core
