#include "server/core/model_repository.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/core/model_registration.h"
#include "server/core/server_state.h"

namespace npu::core {
namespace {

namespace fs = std::filesystem;

constexpr char kOnnxFile[] = "model.onnx";
constexpr char kGraphFile[] = "graph.json";
constexpr char kOnnxPlatform[] = "onnx_onnxv1";
constexpr char kGraphPlatform[] = "npuserve_graph";

// A version folder's name: a positive integer, as Triton's.
bool IsVersion(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s[0] != '0' &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); });
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

absl::StatusOr<std::string> ReadBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

absl::StatusOr<LoadedModel> ReadGraphJson(const fs::path& file) {
  auto text = ReadBytes(file);
  if (!text.ok()) return text.status();
  auto graph = std::make_shared<v1::Graph>();
  auto s = google::protobuf::util::JsonStringToMessage(*text, graph.get());
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.string(), " is not an npu.v1.Graph in JSON: ", std::string(s.message())));
  }
  return LoadedModel{std::move(graph), {}};
}

// The server's own ONNX import, as RegisterGraph runs it.
absl::StatusOr<LoadedModel> ReadOnnx(const fs::path& file) {
  auto bytes = ReadBytes(file);
  if (!bytes.ok()) return bytes.status();
  auto model = ParseModel(v1::RegisterGraphHeader::ONNX, *std::move(bytes));
  if (!model.ok()) return absl::Status(model.status().code(), absl::StrCat(file.string(), ": ", model.status().message()));
  return model;
}

// The version in `folder`: its one model file, read and planned.
ModelRepository::Version LoadVersion(const std::string& version, const fs::path& folder,
                                     const device::DevicePreset& preset, const graph::PlanLimits& limits) {
  ModelRepository::Version v{version, "", nullptr, ""};
  const bool onnx = IsFile(folder / kOnnxFile), json = IsFile(folder / kGraphFile);
  if (onnx == json) {
    v.reason = onnx ? absl::StrCat(folder.string(), " holds both ", kOnnxFile, " and ", kGraphFile, "; keep one")
                    : absl::StrCat("no ", kOnnxFile, " or ", kGraphFile, " in ", folder.string());
    return v;
  }
  v.platform = onnx ? kOnnxPlatform : kGraphPlatform;
  const fs::path file = folder / (onnx ? kOnnxFile : kGraphFile);
  absl::StatusOr<LoadedModel> model = onnx ? ReadOnnx(file) : ReadGraphJson(file);
  if (!model.ok()) {
    v.reason = std::string(model.status().message());
    return v;
  }
  // Imported and planned as a RegisterGraph of the same bytes would be.
  auto graph = RegisteredGraph::Create(std::move(model->graph), std::move(model->declared_outputs), preset, limits,
                                       ServerLimits{}.max_plans_per_graph);
  if (!graph.ok()) {
    v.reason = absl::StrCat(file.string(), ": ", graph.status().message());
    return v;
  }
  v.graph = *std::move(graph);
  return v;
}

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
                                                                       const graph::PlanLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("--model_repository: ", graph::Quoted(dir), " is not a folder"));
  }
  std::unique_ptr<ModelRepository> repo(new ModelRepository(dir, preset, limits));
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
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code is_dir_ec;
    if (!name.empty() && name[0] != '.' && entry.is_directory(is_dir_ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelRepository::Model ModelRepository::ReadModel(const std::string& name) const {
  Model m{name, {}};
  const fs::path folder = fs::path(dir_) / name;
  std::vector<std::string> versions;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string v = entry.path().filename().string();
    std::error_code is_dir_ec;
    if (IsVersion(v) && entry.is_directory(is_dir_ec)) versions.push_back(v);
  }
  // Numeric order: "10" after "9".
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  if (versions.empty()) {
    m.versions.push_back(LoadVersion("1", folder, preset_, limits_));  // unversioned: the model file in the folder
  } else {
    for (const std::string& v : versions) m.versions.push_back(LoadVersion(v, folder / v, preset_, limits_));
  }
  return m;
}

absl::StatusOr<ModelRepository::Model> ModelRepository::Get(absl::string_view name) const {
  MutexLock lock(&mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end()) return NotInRepository(name, dir_);
  return it->second;
}

std::vector<ModelRepository::Model> ModelRepository::List() const {
  std::vector<Model> out;
  const std::vector<std::string> on_disk = NamesOnDisk();
  MutexLock lock(&mu_);
  for (const auto& [name, m] : models_) out.push_back(m);
  for (const std::string& name : on_disk) {
    if (models_.count(name) == 0) {
      out.push_back(Model{name, {Version{"", "", nullptr, "not loaded yet (RepositoryModelLoad loads it)"}}});
    }
  }
  std::sort(out.begin(), out.end(), [](const Model& a, const Model& b) { return a.name < b.name; });
  return out;
}

absl::Status ModelRepository::Load(absl::string_view name) {
  // Only a folder that is there by that exact name: a name is never a path.
  const std::vector<std::string> on_disk = NamesOnDisk();
  if (std::find(on_disk.begin(), on_disk.end(), name) == on_disk.end()) return NotInRepository(name, dir_);
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
  if (it == models_.end()) return NotInRepository(name, dir_);
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
  return absl::StrCat(dir_, ": ", models, models == 1 ? " model, " : " models, ", ready, " of ", versions,
                      versions == 1 ? " version ready" : " versions ready");
}

}  // namespace npu::core
