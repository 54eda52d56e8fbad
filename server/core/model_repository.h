// A model repository: a folder the server serves models from, by name, to
// every tenant (--model_repository DIR). Layout, as Triton's:
//   DIR/NAME/VERSION/model.onnx   or   DIR/NAME/VERSION/graph.json
//   DIR/NAME/model.onnx           or   DIR/NAME/graph.json    (version "1")
//   DIR/NAME/config.pbtxt         Triton's model configuration, optional (model_config.h)
// VERSION is a positive integer; graph.json is an npu.v1.Graph in protobuf's
// JSON mapping. Other files are ignored. Every version of every model is
// loaded (validated and planned for the server's preset) when the repository
// opens; Load reloads a model from disk, Unload drops it. A model that does not
// load stays listed, UNAVAILABLE with the reason.
//
// Files are read through RepositoryFiles (repository_files.h): nothing outside
// the repository's folder is opened unless links are followed on purpose. A
// reason says what is wrong with a file, never what it holds (a parser's own
// message, which may quote the bytes, goes to the server's log only).
//
// Thread-safe. Loading reads and plans outside the lock; a run keeps the
// graph it started with even when the model is unloaded or reloaded.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "server/device/device_preset.h"
#include "server/graph/plan.h"
#include "server/core/graph_store.h"
#include "server/core/model_config.h"
#include "server/core/model_parse.h"
#include "server/core/repository_files.h"

namespace npu::core {

class ModelRepository {
 public:
  struct Version {
    std::string version;                     // "1", "2", ...
    std::string platform;                    // "onnx_onnxv1" or "npuserve_graph"
    std::shared_ptr<RegisteredGraph> graph;  // null when not loaded
    std::string reason;                      // why it is not loaded
  };
  struct Model {
    std::string name;
    std::vector<Version> versions;  // ascending; with a config, those its version_policy serves
    // NAME/config.pbtxt (model_config.h), null without one.
    std::shared_ptr<const inference::ModelConfig> config;
  };

  // Opens `dir` and loads every model in it. Errors only for a folder that
  // cannot be read; models that fail to load are kept with their reason.
  struct Options {
    bool follow_symlinks = false;                     // --model_repository_follow_symlinks
    uint64_t max_model_bytes = (uint64_t{2} << 30) - 1;  // a model file past this is refused
  };
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Open(const std::string& dir,
                                                               const device::DevicePreset& preset,
                                                               const graph::PlanLimits& limits, Options options);

  // The model `name` as last loaded; NOT_FOUND when the repository has no
  // such model (on disk or loaded).
  absl::StatusOr<Model> Get(absl::string_view name) const;
  // Every model: those loaded or tried, and folders on disk not loaded yet.
  std::vector<Model> List() const;

  // Reads and plans the model's versions from disk again, replacing the ones
  // served. When a version fails (the error names the file and why), a model
  // that was serving keeps serving as it was (Triton's rule); one that was not
  // stays UNAVAILABLE with the new reasons.
  absl::Status Load(absl::string_view name);
  // Stops serving the model (runs in flight finish); Load brings it back.
  absl::Status Unload(absl::string_view name);

  // "DIR: 3 models, 4 of 5 versions ready", for the startup line.
  std::string Summary() const;

 private:
  ModelRepository(std::unique_ptr<RepositoryFiles> files, device::DevicePreset preset, graph::PlanLimits limits,
                  Options options)
      : files_(std::move(files)), preset_(std::move(preset)), limits_(limits), options_(options) {}
  // The model folders on disk now (and links to folders, refused when they leave it).
  std::vector<std::string> NamesOnDisk() const;
  Model ReadModel(const std::string& name) const;
  // NAME/config.pbtxt, checked; null when there is none.
  absl::StatusOr<std::shared_ptr<const inference::ModelConfig>> ReadConfig(const std::string& name) const;
  // Reads and plans one version (as `config`, null without one, asks).
  Version LoadVersion(const std::string& version, const std::string& folder,
                      const inference::ModelConfig* config) const;
  absl::StatusOr<LoadedModel> ReadModelFile(const std::string& file, bool onnx) const;

  const std::unique_ptr<RepositoryFiles> files_;
  const device::DevicePreset preset_;
  const graph::PlanLimits limits_;
  const Options options_;
  mutable Mutex mu_;
  std::map<std::string, Model> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npu::core
