// The core's model metadata and repository index in KServe v2's messages
// (both frontends: gRPC answers them, HTTP writes them as JSON).
#pragma once

#include <vector>

#include "kserve/grpc_service.pb.h"
#include "server/core/model_registry.h"

namespace npu::rpc {

// Inputs and outputs with KServe datatypes; -1 for a dim each request binds;
// an output whose type is known only once a request binds the dims has no
// datatype or shape.
inference::ModelMetadataResponse KserveModelMetadata(const core::ModelMetadata& m);
inference::RepositoryIndexResponse KserveIndex(const std::vector<core::IndexEntry>& index);

}  // namespace npu::rpc
