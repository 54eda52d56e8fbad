// The model repository's boundary (issue 28): paths resolve under the
// repository's realpath; a symbolic link that leaves it (a model folder, a
// version folder, a model file) is refused by name and its target never read,
// unless links are followed on purpose; a link that stays inside is fine; and
// no reason quotes a file's bytes.
#include "server/core/model_repository.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <google/protobuf/util/json_util.h>

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "SECRET-0xC0FFEE";

std::string ReluJson() {
  client::GraphBuilder g("relu");
  g.Output(g.Relu(g.Input("x", v1::FLOAT32, {4})), "y");
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(g.Build(), &json).ok());
  return json;
}

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

class ModelRepositoryBoundaryTest : public ::testing::Test {
 protected:
  ModelRepositoryBoundaryTest() {
    char dir[] = "/tmp/npu-repo-test.XXXXXX";
    base_ = mkdtemp(dir);
    repo_ = base_ / "repo";
    const fs::path outside = base_ / "outside";
    Write(outside / "model" / "1" / "graph.json", ReluJson());
    Write(outside / "secret.json", std::string(kSecret) + " {");
    Write(repo_ / "good" / "1" / "graph.json", ReluJson());
    fs::create_symlink(outside / "model", repo_ / "linked_model");          // a model folder
    fs::create_directories(repo_ / "linked_version");
    fs::create_symlink(outside / "model" / "1", repo_ / "linked_version" / "1");  // a version folder
    fs::create_directories(repo_ / "linked_file" / "1");
    fs::create_symlink(outside / "secret.json", repo_ / "linked_file" / "1" / "graph.json");  // a model file
    fs::create_directories(repo_ / "inside" / "1");
    fs::create_symlink("../../good/1/graph.json", repo_ / "inside" / "1" / "graph.json");  // stays inside
    Write(repo_ / "garbled" / "1" / "graph.json", std::string(kSecret) + " {");
  }
  ~ModelRepositoryBoundaryTest() override { fs::remove_all(base_); }

  std::unique_ptr<ModelRepository> Open(bool follow) {
    return ModelRepository::Open(repo_.string(), device::PresetByName("ascend910").value(), {},
                                 {.follow_symlinks = follow})
        .value();
  }
  static std::string Reason(const ModelRepository& r, const std::string& name) {
    auto m = r.Get(name);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? m->versions.at(0).reason : "";
  }
  static bool Loaded(const ModelRepository& r, const std::string& name) {
    auto m = r.Get(name);
    return m.ok() && m->versions.at(0).graph != nullptr;
  }

  fs::path base_, repo_;
};

TEST_F(ModelRepositoryBoundaryTest, LinksThatLeaveTheRepositoryAreRefusedByName) {
  auto repo = Open(false);
  EXPECT_TRUE(Loaded(*repo, "good"));
  EXPECT_TRUE(Loaded(*repo, "inside")) << Reason(*repo, "inside");
  for (const char* name : {"linked_model", "linked_version", "linked_file"}) {
    EXPECT_FALSE(Loaded(*repo, name)) << name;
    EXPECT_THAT(Reason(*repo, name), HasSubstr("is a symbolic link that leaves the model repository")) << name;
    EXPECT_THAT(Reason(*repo, name), Not(HasSubstr(kSecret)));
    EXPECT_THAT(Reason(*repo, name), Not(HasSubstr((base_ / "outside").string()))) << "the target is not named";
  }
  EXPECT_THAT(Reason(*repo, "linked_model"), HasSubstr("/linked_model is a symbolic link"));
  EXPECT_THAT(Reason(*repo, "linked_version"), HasSubstr("/linked_version/1 is a symbolic link"));
  EXPECT_THAT(Reason(*repo, "linked_file"), HasSubstr("/linked_file/1/graph.json is a symbolic link"));
  // A reload reads the disk again and refuses again.
  EXPECT_THAT(std::string(repo->Load("linked_file").message()), HasSubstr("leaves the model repository"));
}

TEST_F(ModelRepositoryBoundaryTest, FollowingLinksIsAnExplicitChoice) {
  auto repo = Open(true);
  EXPECT_TRUE(Loaded(*repo, "linked_model")) << Reason(*repo, "linked_model");
  EXPECT_TRUE(Loaded(*repo, "linked_version")) << Reason(*repo, "linked_version");
  EXPECT_FALSE(Loaded(*repo, "linked_file"));  // followed, and not a graph: still no bytes quoted
  EXPECT_THAT(Reason(*repo, "linked_file"), Not(HasSubstr(kSecret)));
}

TEST_F(ModelRepositoryBoundaryTest, ReasonsSayWhatIsWrongNotWhatTheFileHolds) {
  auto repo = Open(false);
  const std::string reason = Reason(*repo, "garbled");
  EXPECT_THAT(reason, HasSubstr("garbled/1/graph.json is not an npu.v1.Graph in JSON"));
  EXPECT_THAT(reason, Not(HasSubstr(kSecret)));
}

}  // namespace
}  // namespace npu::core
