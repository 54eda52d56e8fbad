// Binding a request to a model, written once for every frontend: which tensor
// feeds each declared input (inline, or a handle of the tenant on the run's
// device), checked against the declaration and then the plan, and which
// outputs the answer holds and which stay on the device. Errors name the
// input or output and say what the model takes, in the caller's datatype
// words (Request::dtype_name).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/core/request.h"
#include "server/core/tensor_store.h"
#include "server/device/device.h"
#include "server/graph/plan.h"

namespace npu::core {

// Who the errors name: "the graph" (npu.v1), or `model "NAME"` (KServe).
struct BindSubject {
  std::string name;
  DataTypeNamer dtype_name = nullptr;  // null: npu.v1's names
};

// "FP32[-1,4]": a declared type in the subject's words (-1: bound per request).
std::string DescribeDeclared(const BindSubject& subject, const v1::ValueInfo& declared);

// The tensors feeding `declared` (a model's inputs, in order): every input fed
// exactly once, inline or by a handle of `tenant` on `device`, fitting its
// declared dtype and shape (a dim of -1 takes any size); no other name. The
// inline tensors are moved out of `given`.
absl::StatusOr<std::vector<graph::HostTensor>> BindInputs(const std::vector<v1::ValueInfo>& declared,
                                                          std::vector<RequestInput>& given, const BindSubject& subject,
                                                          const std::string& tenant, const device::Device& device,
                                                          TensorStore& store);

// The bound inputs against the plan that runs them (exact types).
absl::Status CheckPlanInputs(const graph::Plan& plan, const std::vector<graph::HostTensor>& inputs,
                             const BindSubject& subject);

std::vector<graph::TensorType> TypesOf(const std::vector<graph::HostTensor>& inputs);

// The plan's inputs as declarations (a plan's types are all bound).
std::vector<v1::ValueInfo> DeclaredInputs(const graph::Plan& plan);

struct OutputSelection {
  std::vector<size_t> outputs;      // indices into Plan::outputs, in answer order
  std::vector<bool> keep_on_device;  // per entry of `outputs`
};

// `requested` names (empty: every output, in the plan's order), each once;
// `keep_on_device` names outputs answered as handles (all of them with
// `keep_all`).
absl::StatusOr<OutputSelection> SelectOutputs(const graph::Plan& plan, const std::vector<RequestOutput>& requested,
                                              const std::vector<std::string>& keep_on_device, bool keep_all,
                                              const BindSubject& subject);

}  // namespace npu::core
