// What a model name means, for one tenant, in this order:
//   1. a model of the model repository (--model_repository; the same for
//      every tenant), with its versions;
//   2. a graph the tenant registered (npu.v1 RegisterGraph), by its id;
//   3. a registered graph by its graph's name, when exactly one of the
//      tenant's graphs carries it.
// A registered graph has one version, "1". Other tenants' graphs do not exist
// for the caller: their ids and names get NOT_FOUND like names never used.
// Every frontend that names models (KServe's gRPC and REST, npu.v1 Run by
// model) resolves them here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/graph_store.h"
#include "server/core/model_repository.h"

namespace npu::core {

inline constexpr char kRegisteredGraphPlatform[] = "npuserve_graph";

struct ServedModel {
  std::string name;                   // as the request named it
  std::string version;                // the version resolved
  std::vector<std::string> versions;  // every version under the name
  std::string platform;
  std::shared_ptr<RegisteredGraph> graph;
  std::shared_ptr<const inference::ModelConfig> config;  // a repository model's config.pbtxt, or null
};

// Find's answer for a model that does not exist or is not loaded: to the
// readiness calls, not ready rather than an error.
inline bool IsAbsentModel(const absl::Status& s) { return absl::IsNotFound(s) || absl::IsUnavailable(s); }

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;
  // -1 for a dim each request binds; an output whose type is known only once a
  // request binds the dims has DATA_TYPE_UNSPECIFIED and no shape.
  std::vector<v1::ValueInfo> inputs, outputs;
};

struct IndexEntry {
  std::string name;
  std::string version;
  std::string state;   // READY or UNAVAILABLE
  std::string reason;  // why not loaded
};

class ModelRegistry {
 public:
  explicit ModelRegistry(GraphStore& graphs) : graphs_(graphs) {}

  // Before serving starts.
  void SetRepository(std::unique_ptr<ModelRepository> repository) { repository_ = std::move(repository); }
  const ModelRepository* repository() const { return repository_.get(); }

  // A model ready for inference; without a version, a repository model's
  // highest loaded one. NOT_FOUND for a name that is no model of the
  // caller's or a version the model does not have, UNAVAILABLE for a
  // repository model (or version) not loaded, INVALID_ARGUMENT for a name
  // shared by several registered graphs.
  absl::StatusOr<ServedModel> Find(const std::string& tenant, absl::string_view name, absl::string_view version) const;

  // Name, versions, platform, and the inputs and outputs with their datatypes
  // and shapes (the outputs' as inferred by planning).
  absl::StatusOr<ModelMetadata> Metadata(const std::string& tenant, absl::string_view name,
                                         absl::string_view version) const;

  // Every model the tenant may name, with its state: the repository's (each
  // version READY or UNAVAILABLE with the reason), then its registered
  // graphs by id (READY).
  std::vector<IndexEntry> Index(const std::string& tenant, bool ready_only) const;

  // The model's configuration as Triton answers it (its model-config
  // endpoints): the config.pbtxt, with what it leaves out (name, platform,
  // inputs and outputs) filled in from the model; for a model without one,
  // all of it from the model.
  absl::StatusOr<inference::ModelConfig> Config(const std::string& tenant, absl::string_view name,
                                                absl::string_view version) const;

  // Load (re)reads a repository model from disk; a registered graph is loaded
  // already (OK). Unload stops serving a repository model, and releases one
  // registration of a registered graph. A load whose parameters bring the
  // model itself ("config", "file:VERSION/NAME"; `parameters` are their names)
  // gets UNIMPLEMENTED.
  absl::Status Load(const std::string& tenant, absl::string_view name, const std::vector<std::string>& parameters);
  absl::Status Unload(const std::string& tenant, absl::string_view name);

 private:
  absl::StatusOr<ServedModel> FindRegistered(const std::string& tenant, absl::string_view name,
                                             absl::string_view version) const;

  GraphStore& graphs_;
  std::unique_ptr<ModelRepository> repository_;  // null without --model_repository
};

}  // namespace npu::core
