// Registering a model, whichever call it came by (RegisterGraph with a Graph
// or ONNX bytes, RegisterGraphStream's chunks): the content hash, the tenant's
// earlier registration of the same bytes if any, else the ONNX import or the
// Graph parse, then validation and (for a static graph) the plan.
#pragma once

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"
#include "server/core/model_parse.h"
#include "server/core/server_state.h"

namespace npu::core {

// The model's size and hash are known; `load` gives its graph, called only when
// `tenant` has no registration of this hash yet. `claimed_sha256` (may be
// empty) must equal `sha256`.
absl::StatusOr<v1::RegisterGraphResponse> RegisterModel(ServerState& state, const std::string& tenant,
                                                        uint64_t model_bytes, const std::string& sha256,
                                                        const std::string& device, const std::string& claimed_sha256,
                                                        absl::FunctionRef<absl::StatusOr<LoadedModel>()> load);

// `bytes`: a serialized npu.v1.Graph (NPU_GRAPH) or onnx.ModelProto (ONNX).
// `claimed_sha256` (may be empty) must equal the bytes' hash.
absl::StatusOr<v1::RegisterGraphResponse> RegisterModelBytes(ServerState& state, const std::string& tenant,
                                                             v1::RegisterGraphHeader::Format format,
                                                             std::string bytes, const std::string& device,
                                                             const std::string& claimed_sha256);

// A registration as its response describes it.
v1::RegisterGraphResponse DescribeRegistration(const std::string& id, const RegisteredGraph& graph,
                                               const std::string& sha256);

}  // namespace npu::core
