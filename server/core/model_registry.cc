#include "server/core/model_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"

namespace npu::core {
namespace {

constexpr char kGraphVersion[] = "1";

absl::Status NoSuchVersion(absl::string_view name, absl::string_view version, const std::vector<std::string>& all) {
  return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name), " has no version ", graph::Quoted(version),
                                          " (versions: ", absl::StrJoin(all, ", "), ")"));
}

// The version to serve of a repository model: the one asked for, or the
// highest loaded.
absl::StatusOr<ServedModel> FromRepository(const ModelRepository::Model& m, absl::string_view name,
                                           absl::string_view version) {
  ServedModel model{std::string(name), "", {}, "", nullptr};
  for (const auto& v : m.versions) {
    if (!v.version.empty()) model.versions.push_back(v.version);
  }
  const ModelRepository::Version* pick = nullptr;
  for (const auto& v : m.versions) {
    if (version.empty() ? v.graph != nullptr : v.version == version) pick = &v;
  }
  if (pick == nullptr && !version.empty()) return NoSuchVersion(name, version, model.versions);
  if (pick == nullptr || pick->graph == nullptr) {
    std::vector<std::string> why;
    for (const auto& v : m.versions) {
      if (v.graph == nullptr && (version.empty() || v.version == version)) {
        why.push_back(v.version.empty() ? v.reason : absl::StrCat("version ", v.version, ": ", v.reason));
      }
    }
    return absl::UnavailableError(absl::StrCat("model ", graph::Quoted(name),
                                               version.empty() ? "" : absl::StrCat(" version ", graph::Quoted(version)),
                                               " is not loaded: ", absl::StrJoin(why, "; ")));
  }
  model.version = pick->version;
  model.platform = pick->platform;
  model.graph = pick->graph;
  return model;
}

}  // namespace

absl::StatusOr<ServedModel> ModelRegistry::Find(const std::string& tenant, absl::string_view name,
                                                absl::string_view version) const {
  if (name.empty()) return absl::InvalidArgumentError("the request names no model");
  if (repository_ != nullptr) {
    if (auto m = repository_->Get(name); m.ok()) return FromRepository(*m, name, version);
  }
  return FindRegistered(tenant, name, version);
}

absl::StatusOr<ServedModel> ModelRegistry::FindRegistered(const std::string& tenant, absl::string_view name,
                                                          absl::string_view version) const {
  ServedModel model{std::string(name), kGraphVersion, {kGraphVersion}, kRegisteredGraphPlatform, nullptr};
  if (auto by_id = graphs_.Get(tenant, model.name); by_id.ok()) {
    model.graph = *std::move(by_id);
  } else {
    std::vector<std::string> ids;
    for (auto& [id, entry] : graphs_.List(tenant)) {
      if (entry->graph().name() != name) continue;
      ids.push_back(id);
      model.graph = std::move(entry);
    }
    if (ids.empty()) {
      return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name),
                                              " not found: ", repository_ ? "not in the model repository, and " : "",
                                              "no graph registered by this caller has that id or name"));
    }
    if (ids.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("model name ", graph::Quoted(name), " is the name of ", ids.size(),
                                                     " registered graphs (", absl::StrJoin(ids, ", "),
                                                     "); name one by its id"));
    }
  }
  if (!version.empty() && version != kGraphVersion) return NoSuchVersion(name, version, model.versions);
  return model;
}

absl::StatusOr<ModelMetadata> ModelRegistry::Metadata(const std::string& tenant, absl::string_view name,
                                                      absl::string_view version) const {
  auto model = Find(tenant, name, version);
  if (!model.ok()) return model.status();
  return ModelMetadata{model->name, model->versions, model->platform, model->graph->inputs(),
                       model->graph->outputs()};
}

std::vector<IndexEntry> ModelRegistry::Index(const std::string& tenant, bool ready_only) const {
  std::vector<IndexEntry> out;
  if (repository_ != nullptr) {
    for (const ModelRepository::Model& m : repository_->List()) {
      for (const ModelRepository::Version& v : m.versions) {
        if (ready_only && v.graph == nullptr) continue;
        out.push_back({m.name, v.version, v.graph != nullptr ? "READY" : "UNAVAILABLE",
                       v.graph == nullptr ? v.reason : ""});
      }
    }
  }
  // Registered graphs are always ready.
  for (const auto& [id, entry] : graphs_.List(tenant)) out.push_back({id, kGraphVersion, "READY", ""});
  return out;
}

absl::Status ModelRegistry::Load(const std::string& tenant, absl::string_view name,
                                 const std::vector<std::string>& parameters) {
  for (const std::string& key : parameters) {
    if (key == "config" || absl::StartsWith(key, "file:")) {
      return absl::UnimplementedError(absl::StrCat("load parameter ", graph::Quoted(key),
                                                   ": models are not uploaded through load; register the graph "
                                                   "(npu.v1 RegisterGraph) or put it in the model repository"));
    }
  }
  if (repository_ != nullptr) {
    absl::Status loaded = repository_->Load(name);
    if (!absl::IsNotFound(loaded)) return loaded;
  }
  return FindRegistered(tenant, name, "").status();
}

absl::Status ModelRegistry::Unload(const std::string& tenant, absl::string_view name) {
  if (repository_ != nullptr) {
    absl::Status unloaded = repository_->Unload(name);
    if (!absl::IsNotFound(unloaded)) return unloaded;
  }
  auto model = FindRegistered(tenant, name, "");
  if (!model.ok()) return model.status();
  for (const auto& [id, entry] : graphs_.List(tenant)) {
    if (entry == model->graph) return graphs_.Remove(tenant, id);
  }
  return absl::OkStatus();  // unregistered meanwhile
}

}  // namespace npu::core
