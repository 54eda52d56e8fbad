#include "server/rpc/kserve_models.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/kserve_datatype.h"

namespace npu::rpc {
namespace {

constexpr char kGraphVersion[] = "1";

// A model's inputs or outputs as declared: -1 for a dynamic dim (bound by each
// request); an output whose type is known only once a request binds the
// dims (a dynamic npu.v1.Graph declares none) has no datatype or shape.
void DescribeValues(const std::vector<v1::ValueInfo>& values,
                    google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const v1::ValueInfo& v : values) {
    auto* t = out->Add();
    t->set_name(v.name());
    if (v.dtype() == v1::DATA_TYPE_UNSPECIFIED) continue;
    t->set_datatype(KserveDataTypeName(v.dtype()));
    for (int64_t d : v.shape()) t->add_shape(d);
  }
}

absl::Status NoSuchVersion(absl::string_view name, absl::string_view version, const std::vector<std::string>& all) {
  return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name), " has no version ", graph::Quoted(version),
                                          " (versions: ", absl::StrJoin(all, ", "), ")"));
}

// The version to serve of a repository model: the one asked for, or the
// highest loaded.
absl::StatusOr<KserveModel> FromRepository(const core::ModelRepository::Model& m, absl::string_view name,
                                           absl::string_view version) {
  KserveModel model{std::string(name), "", {}, "", nullptr};
  for (const auto& v : m.versions) {
    if (!v.version.empty()) model.versions.push_back(v.version);
  }
  const core::ModelRepository::Version* pick = nullptr;
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

absl::StatusOr<KserveModel> KserveModels::Find(const std::string& tenant, absl::string_view name,
                                               absl::string_view version) const {
  if (name.empty()) return absl::InvalidArgumentError("the request names no model");
  if (repository_ != nullptr) {
    if (auto m = repository_->Get(name); m.ok()) return FromRepository(*m, name, version);
  }
  return FindRegistered(tenant, name, version);
}

absl::StatusOr<KserveModel> KserveModels::FindRegistered(const std::string& tenant, absl::string_view name,
                                                         absl::string_view version) const {
  KserveModel model{std::string(name), kGraphVersion, {kGraphVersion}, kRegisteredGraphPlatform, nullptr};
  if (auto by_id = state_.graphs.Get(tenant, model.name); by_id.ok()) {
    model.graph = *std::move(by_id);
  } else {
    std::vector<std::string> ids;
    for (auto& [id, entry] : state_.graphs.List(tenant)) {
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

absl::StatusOr<inference::ModelMetadataResponse> KserveModels::Metadata(const std::string& tenant,
                                                                        absl::string_view name,
                                                                        absl::string_view version) const {
  auto model = Find(tenant, name, version);
  if (!model.ok()) return model.status();
  inference::ModelMetadataResponse out;
  out.set_name(model->name);
  for (const std::string& v : model->versions) out.add_versions(v);
  out.set_platform(model->platform);
  DescribeValues(model->graph->inputs(), out.mutable_inputs());
  DescribeValues(model->graph->outputs(), out.mutable_outputs());
  return out;
}

inference::RepositoryIndexResponse KserveModels::Index(const std::string& tenant, bool ready_only) const {
  inference::RepositoryIndexResponse out;
  if (repository_ != nullptr) {
    for (const core::ModelRepository::Model& m : repository_->List()) {
      for (const core::ModelRepository::Version& v : m.versions) {
        if (ready_only && v.graph == nullptr) continue;
        auto* entry = out.add_models();
        entry->set_name(m.name);
        entry->set_version(v.version);
        entry->set_state(v.graph != nullptr ? "READY" : "UNAVAILABLE");
        if (v.graph == nullptr) entry->set_reason(v.reason);
      }
    }
  }
  // Registered graphs are always ready.
  for (const auto& [id, entry] : state_.graphs.List(tenant)) {
    auto* m = out.add_models();
    m->set_name(id);
    m->set_version(kGraphVersion);
    m->set_state("READY");
  }
  return out;
}

absl::Status KserveModels::Load(const std::string& tenant, absl::string_view name,
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

absl::Status KserveModels::Unload(const std::string& tenant, absl::string_view name) {
  if (repository_ != nullptr) {
    absl::Status unloaded = repository_->Unload(name);
    if (!absl::IsNotFound(unloaded)) return unloaded;
  }
  auto model = FindRegistered(tenant, name, "");
  if (!model.ok()) return model.status();
  for (const auto& [id, entry] : state_.graphs.List(tenant)) {
    if (entry == model->graph) return state_.graphs.Remove(tenant, id);
  }
  return absl::OkStatus();  // unregistered meanwhile
}

}  // namespace npu::rpc
