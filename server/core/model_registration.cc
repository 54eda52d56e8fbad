#include "server/core/model_registration.h"

#include "absl/strings/str_cat.h"
#include "base/sha256.h"

namespace npu::core {

v1::RegisterGraphResponse DescribeRegistration(const std::string& id, const RegisteredGraph& graph,
                                               const std::string& sha256) {
  v1::RegisterGraphResponse resp;
  resp.set_graph_id(id);
  for (const auto& v : graph.inputs()) *resp.add_inputs() = v;
  for (const auto& v : graph.outputs()) *resp.add_outputs() = v;
  resp.set_content_sha256(sha256);
  return resp;
}

absl::StatusOr<v1::RegisterGraphResponse> RegisterModel(ServerState& state, const std::string& tenant,
                                                        uint64_t model_bytes, const std::string& sha256,
                                                        const std::string& device, const std::string& claimed_sha256,
                                                        absl::FunctionRef<absl::StatusOr<LoadedModel>()> load) {
  auto dev = state.devices.Find(device);
  if (!dev.ok()) return dev.status();
  if (model_bytes > state.limits.max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("the model is ", model_bytes, " bytes; the limit is ",
                                                   state.limits.max_model_bytes));
  }
  if (!claimed_sha256.empty() && claimed_sha256 != sha256) {
    return absl::InvalidArgumentError(absl::StrCat("content_sha256 ", claimed_sha256.substr(0, 64),
                                                   " does not match the model's bytes (", sha256, ")"));
  }
  if (auto found = state.graphs.Reregister(tenant, sha256); found.ok()) {
    return DescribeRegistration(found->first, *found->second, sha256);
  }
  auto model = load();
  if (!model.ok()) return model.status();
  auto entry = RegisteredGraph::Create(std::move(model->graph), std::move(model->declared_outputs),
                                       (*dev)->preset(), state.plan_limits(), state.limits.max_plans_per_graph);
  // Importing and planning a large model freed copies of its bytes (the
  // request, the parsed ONNX): returned now rather than within the watcher's
  // second, so the first runs start from the model's own footprint.
  if (state.memory_returner != nullptr && model_bytes >= state.memory_returner->threshold_bytes()) {
    state.memory_returner->Check();
  }
  if (!entry.ok()) return entry.status();
  const std::string id = state.graphs.Add(tenant, *entry, sha256);
  auto stored = state.graphs.Get(tenant, id);  // a concurrent registration of the same bytes may have won
  if (!stored.ok()) return stored.status();
  return DescribeRegistration(id, **stored, sha256);
}

absl::StatusOr<v1::RegisterGraphResponse> RegisterModelBytes(ServerState& state, const std::string& tenant,
                                                             v1::RegisterGraphHeader::Format format,
                                                             std::string bytes, const std::string& device,
                                                             const std::string& claimed_sha256) {
  const uint64_t size = bytes.size();
  const std::string sha = size > state.limits.max_model_bytes ? std::string() : Sha256Hex(bytes);
  return RegisterModel(state, tenant, size, sha, device, claimed_sha256,
                       [&]() { return ParseModel(format, std::move(bytes)); });
}

}  // namespace npu::core
