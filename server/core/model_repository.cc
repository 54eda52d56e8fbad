#include "server/core/model_repository.h"

#include <algorithm>
#include <cstdio>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "server/graph/bounded_text.h"
#include "server/core/model_batchers.h"
#include "server/core/server_state.h"

namespace npu::core {
namespace {

constexpr char kOnnxFile[] = "model.onnx";
constexpr char kGraphFile[] = "graph.json";
constexpr char kOnnxPlatform[] = "onnx_onnxv1";
constexpr char kGraphPlatform[] = "npuserve_graph";

// A version folder's name: a positive integer, as Triton's.
bool IsVersion(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s[0] != '0' &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); });
}

std::string Join(const std::string& folder, const char* name) {
  return folder.empty() ? name : absl::StrCat(folder, "/", name);
}

// A parser's own message may quote the file's bytes: it goes to the server's
// log, and the reason clients see says only what is wrong.
void LogParserMessage(const std::string& path, absl::string_view message) {
  std::fprintf(stderr, "level=warn msg=\"model repository: %s: %s\"\n", path.c_str(),
               absl::StrReplaceAll(message, {{"\"", "'"}, {"\n", " "}}).c_str());
}

}  // namespace

absl::StatusOr<LoadedModel> ModelRepository::ReadModelFile(const std::string& file, bool onnx) const {
  auto bytes = files_->Read(file, options_.max_model_bytes);
  if (!bytes.ok()) return bytes.status();
  const std::string path = files_->PathOf(file);
  if (onnx) {
    // The importer's messages name what is wrong (an op, a node, an
    // attribute), never the bytes: protobuf's own parse error is not passed on.
    auto model = ParseModel(v1::RegisterGraphHeader::ONNX, *std::move(bytes));
    if (!model.ok()) return absl::Status(model.status().code(), absl::StrCat(path, ": ", model.status().message()));
    return model;
  }
  auto graph = std::make_shared<v1::Graph>();
  if (auto s = google::protobuf::util::JsonStringToMessage(*bytes, graph.get()); !s.ok()) {
    LogParserMessage(path, std::string(s.message()));
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not an npu.v1.Graph in JSON (protobuf's JSON mapping; the server's log has the parser's message)"));
  }
  return LoadedModel{std::move(graph), {}};
}

// The version in `folder`: its one model file, read and planned.
ModelRepository::Version ModelRepository::LoadVersion(const std::string& version, const std::string& folder,
                                                     const inference::ModelConfig* config) const {
  Version v{version, "", nullptr, ""};
  const RepositoryFiles::Kind onnx_kind = files_->Lookup(Join(folder, kOnnxFile));
  const RepositoryFiles::Kind json_kind = files_->Lookup(Join(folder, kGraphFile));
  for (const auto& [kind, name] : {std::pair{onnx_kind, kOnnxFile}, std::pair{json_kind, kGraphFile}}) {
    if (kind == RepositoryFiles::Kind::kOutside) {
      v.reason = files_->Outside(Join(folder, name));
      return v;
    }
  }
  const bool onnx = onnx_kind == RepositoryFiles::Kind::kFile, json = json_kind == RepositoryFiles::Kind::kFile;
  if (onnx == json) {
    v.reason = onnx ? absl::StrCat(files_->PathOf(folder), " holds both ", kOnnxFile, " and ", kGraphFile, "; keep one")
                    : absl::StrCat("no ", kOnnxFile, " or ", kGraphFile, " in ", files_->PathOf(folder));
    return v;
  }
  v.platform = onnx ? kOnnxPlatform : kGraphPlatform;
  const std::string file = Join(folder, onnx ? kOnnxFile : kGraphFile);
  absl::StatusOr<LoadedModel> model = ReadModelFile(file, onnx);
  if (!model.ok()) {
    v.reason = std::string(model.status().message());
    return v;
  }
  // A batched model runs every batch size up to max_batch_size: its plan
  // cache keeps that many (up to 64) rather than replanning as sizes vary.
  const bool batched = BatchesDynamically(config);
  size_t max_plans = ServerLimits{}.max_plans_per_graph;
  if (batched) max_plans = std::max(max_plans, static_cast<size_t>(std::min(config->max_batch_size(), 64)));
  // Imported and planned as a RegisterGraph of the same bytes would be.
  auto graph = RegisteredGraph::Create(std::move(model->graph), std::move(model->declared_outputs), preset_, limits_,
                                       max_plans);
  if (!graph.ok()) {
    v.reason = absl::StrCat(files_->PathOf(file), ": ", graph.status().message());
    return v;
  }
  for (const v1::ValueInfo& in : batched ? (*graph)->inputs() : std::vector<v1::ValueInfo>{}) {
    if (in.shape_size() == 0 || in.shape(0) != -1) {
      v.reason = absl::StrCat(files_->PathOf(file), ": the config has dynamic_batching, but input ",
                              graph::Quoted(in.name()),
                              in.shape_size() == 0 ? " is a scalar" : absl::StrCat(" has a fixed first dim ", in.shape(0)),
                              "; a batched model's inputs take the batch as a dynamic first dim (-1)");
      return v;
    }
  }
  v.graph = *std::move(graph);
  return v;
}

namespace {

// Why a model serves nothing, from its versions' reasons.
std::string Reasons(const ModelRepository::Model& m) {
  std::vector<std::string> out;
  for (const auto& v : m.versions) {
    if (v.graph == nullptr) out.push_back(absl::StrCat("version ", v.version, ": ", v.reason));
  }
  return absl::StrJoin(out, "; ");
}

// Whether any version of `m` is loaded.
bool Serves(const ModelRepository::Model& m) {
  return std::any_of(m.versions.begin(), m.versions.end(), [](const auto& v) { return v.graph != nullptr; });
}

absl::Status NotInRepository(absl::string_view name, const std::string& dir) {
  return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name), " is not in the model repository ", dir));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Open(const std::string& dir,
                                                                       const device::DevicePreset& preset,
                                                                       const graph::PlanLimits& limits,
                                                                       Options options) {
  auto files = RepositoryFiles::Open(dir, options.follow_symlinks);
  if (!files.ok()) return files.status();
  std::unique_ptr<ModelRepository> repo(new ModelRepository(*std::move(files), preset, limits, options));
  for (const std::string& name : repo->NamesOnDisk()) {
    Model m = repo->ReadModel(name);
    if (const std::string why = Reasons(m); !why.empty()) {
      std::fprintf(stderr, "level=error msg=\"model repository: model %s: %s\"\n", graph::Quoted(name).c_str(),
                   why.c_str());
    }
    MutexLock lock(&repo->mu_);
    repo->models_[name] = std::move(m);
  }
  return repo;
}

std::vector<std::string> ModelRepository::NamesOnDisk() const {
  std::vector<std::string> names;
  for (const std::string& name : files_->List("")) {
    const RepositoryFiles::Kind kind = files_->Lookup(name);
    if (name[0] != '.' && (kind == RepositoryFiles::Kind::kFolder || kind == RepositoryFiles::Kind::kOutside)) {
      names.push_back(name);
    }
  }
  return names;
}

absl::StatusOr<std::shared_ptr<const inference::ModelConfig>> ModelRepository::ReadConfig(
    const std::string& name) const {
  const std::string file = Join(name, kModelConfigFile);
  switch (files_->Lookup(file)) {
    case RepositoryFiles::Kind::kMissing: return nullptr;
    case RepositoryFiles::Kind::kOutside: return absl::PermissionDeniedError(files_->Outside(file));
    default: break;
  }
  auto text = files_->Read(file, kMaxModelConfigBytes);
  if (!text.ok()) return text.status();
  auto config = ParseModelConfig(*text, files_->PathOf(file), name);
  if (!config.ok()) return config.status();
  return std::make_shared<const inference::ModelConfig>(*std::move(config));
}

ModelRepository::Model ModelRepository::ReadModel(const std::string& name) const {
  Model m{name, {}, nullptr};
  if (files_->Lookup(name) == RepositoryFiles::Kind::kOutside) {
    m.versions.push_back(Version{"1", "", nullptr, files_->Outside(name)});
    return m;
  }
  // A config that does not read or check keeps every version from loading,
  // each with its reason (a model is never served against a config it ignored).
  auto config = ReadConfig(name);
  if (config.ok()) m.config = *config;
  std::vector<std::string> versions;
  for (const std::string& v : files_->List(name)) {
    const RepositoryFiles::Kind kind = files_->Lookup(Join(name, v.c_str()));
    if (IsVersion(v) && (kind == RepositoryFiles::Kind::kFolder || kind == RepositoryFiles::Kind::kOutside)) {
      versions.push_back(v);
    }
  }
  // Numeric order: "10" after "9".
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  if (!config.ok()) {
    if (versions.empty()) versions.push_back("1");
    for (const std::string& v : versions) m.versions.push_back(Version{v, "", nullptr, std::string(config.status().message())});
    return m;
  }
  if (versions.empty()) {
    m.versions.push_back(LoadVersion("1", name, m.config.get()));  // unversioned: the model file in the folder
    return m;
  }
  if (m.config != nullptr) {
    std::vector<std::string> served = VersionsServed(*m.config, versions);
    if (served.empty()) {
      m.versions.push_back(Version{"", "", nullptr,
                                   absl::StrCat(files_->PathOf(Join(name, kModelConfigFile)),
                                                ": version_policy serves none of the versions on disk (",
                                                absl::StrJoin(versions, ", "), ")")});
      return m;
    }
    versions = std::move(served);
  }
  for (const std::string& v : versions) {
    const std::string folder = Join(name, v.c_str());
    if (files_->Lookup(folder) == RepositoryFiles::Kind::kOutside) {
      m.versions.push_back(Version{v, "", nullptr, files_->Outside(folder)});
    } else {
      m.versions.push_back(LoadVersion(v, folder, m.config.get()));
    }
  }
  return m;
}

absl::StatusOr<ModelRepository::Model> ModelRepository::Get(absl::string_view name) const {
  MutexLock lock(&mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end()) return NotInRepository(name, files_->PathOf(""));
  return it->second;
}

std::vector<ModelRepository::Model> ModelRepository::List() const {
  std::vector<Model> out;
  const std::vector<std::string> on_disk = NamesOnDisk();
  MutexLock lock(&mu_);
  for (const auto& [name, m] : models_) out.push_back(m);
  for (const std::string& name : on_disk) {
    if (models_.count(name) == 0) {
      out.push_back(Model{name, {Version{"", "", nullptr, "not loaded yet (RepositoryModelLoad loads it)"}}, nullptr});
    }
  }
  std::sort(out.begin(), out.end(), [](const Model& a, const Model& b) { return a.name < b.name; });
  return out;
}

absl::Status ModelRepository::Load(absl::string_view name) {
  // Only a folder that is there by that exact name: a name is never a path.
  const std::vector<std::string> on_disk = NamesOnDisk();
  if (std::find(on_disk.begin(), on_disk.end(), name) == on_disk.end()) return NotInRepository(name, files_->PathOf(""));
  Model m = ReadModel(std::string(name));
  const std::string why = Reasons(m);
  bool kept = false;
  {
    MutexLock lock(&mu_);
    Model& served = models_[std::string(name)];
    // As Triton: a reload that fails leaves a model that serves as it was.
    kept = !why.empty() && Serves(served);
    if (!kept) served = std::move(m);
  }
  if (!why.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("model ", graph::Quoted(name), " did not load: ", why,
                                                   kept ? "; the versions loaded before keep serving" : ""));
  }
  return absl::OkStatus();
}

absl::Status ModelRepository::Unload(absl::string_view name) {
  std::vector<std::shared_ptr<RegisteredGraph>> dropped;  // released after the lock
  MutexLock lock(&mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end()) return NotInRepository(name, files_->PathOf(""));
  for (Version& v : it->second.versions) {
    dropped.push_back(std::move(v.graph));
    v.graph = nullptr;
    v.reason = "unloaded (RepositoryModelLoad loads it again)";
  }
  return absl::OkStatus();
}

std::string ModelRepository::Summary() const {
  size_t models = 0, versions = 0, ready = 0;
  MutexLock lock(&mu_);
  for (const auto& [name, m] : models_) {
    ++models;
    for (const Version& v : m.versions) {
      ++versions;
      ready += v.graph != nullptr;
    }
  }
  return absl::StrCat(files_->PathOf(""), ": ", models, models == 1 ? " model, " : " models, ", ready, " of ", versions,
                      versions == 1 ? " version ready" : " versions ready");
}

}  // namespace npu::core
