#include "server/core/gradient_registration.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/deterministic_bytes.h"
#include "server/core/amp_level.h"
#include "server/core/model_parse.h"
#include "server/core/model_registration.h"
#include "server/train/gradient_graphs.h"

namespace npu::core {
namespace {

absl::StatusOr<v1::Graph> ModelOf(ServerState& state, const std::string& tenant,
                                  v1::RegisterGradientRequest& request) {
  if (request.model_case() == v1::RegisterGradientRequest::kGraphId) {
    auto registered = state.graphs.Get(tenant, request.graph_id());
    if (!registered.ok()) return registered.status();
    return (*registered)->graph();
  }
  const size_t size = request.model_case() == v1::RegisterGradientRequest::kGraph ? request.graph().ByteSizeLong()
                                                                                  : request.onnx_model().size();
  if (size > state.limits.max_model_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model is ", size, " bytes; the limit is ", state.limits.max_model_bytes));
  }
  switch (request.model_case()) {
    case v1::RegisterGradientRequest::kGraph: return std::move(*request.mutable_graph());
    case v1::RegisterGradientRequest::kOnnxModel: {
      auto loaded = ParseModel(v1::RegisterGraphHeader::ONNX, std::move(*request.mutable_onnx_model()));
      if (!loaded.ok()) return loaded.status();
      return *loaded->graph;
    }
    default: return absl::InvalidArgumentError("the request carries no model (graph, onnx_model or graph_id)");
  }
}

absl::StatusOr<v1::RegisterGraphResponse> RegisterBuilt(ServerState& state, const std::string& tenant,
                                                        v1::Graph graph, const std::string& device) {
  const uint64_t size = graph.ByteSizeLong();
  const std::string sha = DeterministicSha256Hex(graph);
  auto shared = std::make_shared<const v1::Graph>(std::move(graph));
  return RegisterModel(state, tenant, size, sha, device, "",
                       [&]() -> absl::StatusOr<LoadedModel> { return LoadedModel{shared, {}}; });
}

}  // namespace

absl::StatusOr<v1::RegisterGradientResponse> RegisterGradient(ServerState& state, const std::string& tenant,
                                                              v1::RegisterGradientRequest& request) {
  auto dev = state.devices.Find(request.device());
  if (!dev.ok()) return dev.status();
  auto model = ModelOf(state, tenant, request);
  if (!model.ok()) return model.status();
  train::GradientRequest what;
  what.parameters.assign(request.parameters().begin(), request.parameters().end());
  what.wrt.assign(request.wrt().begin(), request.wrt().end());
  what.training = request.training();
  auto amp = AmpLevelOf(request.opt_level());
  if (!amp.ok()) return amp.status();
  what.amp = *amp;
  // The planner's node limit before autodiff walks the graph (the graphs built are planned within every limit).
  if (model->nodes_size() > state.plan_limits().max_nodes) {
    return absl::InvalidArgumentError(absl::StrCat("the model has ", model->nodes_size(), " nodes; the limit is ",
                                                   state.plan_limits().max_nodes));
  }
  auto built = train::BuildGradientGraphs(*std::move(model), what, (*dev)->preset());
  if (!built.ok()) return built.status();

  v1::RegisterGradientResponse resp;
  auto forward = RegisterBuilt(state, tenant, std::move(built->forward), request.device());
  if (!forward.ok()) return forward.status();
  if (built->backward.nodes_size() > 0) {
    auto backward = RegisterBuilt(state, tenant, std::move(built->backward), request.device());
    if (!backward.ok()) {
      state.graphs.Remove(tenant, forward->graph_id()).IgnoreError();  // the pair registers whole or not at all
      return backward.status();
    }
    *resp.mutable_backward() = *std::move(backward);
  }
  *resp.mutable_forward() = *std::move(forward);
  for (const auto& v : built->saved) resp.add_saved(v);
  for (const auto& v : built->grad_outputs) resp.add_grad_outputs(v);
  for (const auto& v : built->gradients) resp.add_gradients(v);
  for (const auto& v : built->buffers) resp.add_buffers(v);
  for (const auto& v : built->buffer_outputs) resp.add_buffer_outputs(v);
  resp.set_dropout_seed(built->dropout_seed);
  resp.set_float_status(built->float_status);
  return resp;
}

}  // namespace npu::core
