// The dynamic batchers of the models being served, one per model version
// (per loaded RegisteredGraph), made on a version's first request from its
// config and dropped once the version is unloaded and its last request has
// gone (a reload is a new version object, with a new batcher).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/core/dynamic_batcher.h"
#include "server/core/registered_graph.h"
#include "triton/model_config.pb.h"

namespace npu::core {

// The policy of a model with max_batch_size > 0 and dynamic_batching, served
// on `device_count` devices; INVALID_ARGUMENT when an instance_group names a
// device the server does not have.
absl::StatusOr<BatchPolicy> BatchPolicyOf(const inference::ModelConfig& config, int device_count);

// Whether requests to a model with this config are batched.
bool BatchesDynamically(const inference::ModelConfig* config);

class ModelBatchers {
 public:
  // The batcher of `graph` (version `version` of model `model`), made now
  // from `config` when it has none; INVALID_ARGUMENT when the
  // config places an instance on a device the server lacks. (The repository
  // checks that a batched model's inputs have a dynamic first dim.)
  absl::StatusOr<std::shared_ptr<DynamicBatcher>> For(const std::shared_ptr<RegisteredGraph>& graph,
                                                      const inference::ModelConfig& config, const std::string& model,
                                                      const std::string& version, int device_count, const DynamicBatcher::Runner& runner);

  // Requests waiting in the batchers, by model name and version.
  std::map<std::pair<std::string, std::string>, size_t> Queued() const;

 private:
  struct Held {
    std::weak_ptr<RegisteredGraph> graph;
    std::string model, version;
    std::shared_ptr<DynamicBatcher> batcher;
  };
  mutable Mutex mu_;
  std::map<const RegisteredGraph*, Held> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npu::core
