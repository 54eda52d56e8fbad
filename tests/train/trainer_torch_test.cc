// Training runs against torch: tests/train/make_training_cases.py writes a
// model, a few batches and torch's run of the same steps (same initial
// weights, same batches, torch.optim); the trainer runs them at O0 on one
// device and must follow: every step's loss, the final parameters, the
// optimizer's state (momentum buffers, Adam's moments) and the running
// statistics. Some runs have steps whose batch carries a NaN: both sides skip
// them (the float status here, apex's finite check there), so what follows
// checks that a skipped step leaves the optimizer's state untouched and that
// Adam's bias corrections count the applied steps only, as torch.optim does.
//
// Tolerance, from the numerics: both runs round the Cube's operands to fp16
// and compute the rest in fp32 (ours) or float64 (torch's). Each step then
// differs by fp32 rounding (~1e-6 relative), except where an operand's two
// values straddle an fp16 rounding boundary (2^-11 for that product); a few
// steps compound this into ~1e-4. Losses must agree within 1e-3 relative,
// parameters within 1e-3 of their largest element.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/train/trainer.h"
#include "tests/generated_dir.h"
#include "tests/train/train_test_support.h"

namespace npu::train {
namespace {

namespace fs = std::filesystem;
using testing::DeviceFor;
using testing::ReadNpy;
using testing::RelativeMaxError;

fs::path CaseDir() {
  static const fs::path dir = npu::testing::GeneratedDir(
      fs::path(NPU_SOURCE_DIR) / "tests/train/make_training_cases.py", fs::path(NPU_BINARY_DIR) / "training_cases",
      {fs::path(NPU_SOURCE_DIR) / "tests/train/graph_reference.py", fs::path(NPU_SOURCE_DIR) / "tests/graph/op_cases.py"});
  return dir;
}

struct RunConfig {
  TrainConfig config;
  int steps = 0;
  std::set<int> skips;  // steps torch skipped (their gradients were not finite)
};

RunConfig ReadConfig(const fs::path& dir) {
  std::ifstream in(dir / "config.txt");
  std::string loss, opt;
  RunConfig r;
  in >> loss >> opt >> r.config.optimizer.lr >> r.config.optimizer.momentum >> r.config.optimizer.weight_decay >> r.steps;
  r.config.loss = loss == "mse" ? LossKind::kMse : LossKind::kCrossEntropy;
  r.config.optimizer.kind = opt == "sgd"        ? OptimizerKind::kSgd
                            : opt == "momentum" ? OptimizerKind::kMomentum
                            : opt == "adam"     ? OptimizerKind::kAdam
                                                : OptimizerKind::kAdamW;
  // A power of two: at O0 the scale and unscale are exact, so the run must not change.
  r.config.loss_scale.scale = 128;
  std::ifstream skips(dir / "skips.txt");
  for (int s; skips >> s;) r.skips.insert(s);
  return r;
}

TEST(TrainerTorchTest, RunsFollowTorch) {
  const fs::path dir = CaseDir();
  ASSERT_FALSE(dir.empty()) << "make_training_cases.py failed";
  int cases = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    ++cases;
    const fs::path c = e.path();
    SCOPED_TRACE(c.filename().string());
    auto model = client::LoadGraphJson((c / "model.json").string());
    ASSERT_TRUE(model.ok()) << model.status();
    auto spec = DescribeModel(*std::move(model));
    ASSERT_TRUE(spec.ok()) << spec.status();
    const RunConfig rc = ReadConfig(c);
    auto trainer = Trainer::Create(*spec, rc.config, {&DeviceFor("ascend910")});
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    const graph::HostTensor ref_losses = ReadNpy(c / "ref_losses.npy");
    for (int s = 0; s < rc.steps; ++s) {
      auto r = (*trainer)->Step(ReadNpy(c / absl::StrCat("x_", s, ".npy")),
                                ReadNpy(c / absl::StrCat("y_", s, ".npy")), false);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->step, s + 1);
      if (rc.skips.contains(s)) {
        EXPECT_TRUE(r->skipped) << "step " << s;
        continue;
      }
      const double want = ref_losses.as<float>()[s];
      EXPECT_NEAR(r->loss, want, 1e-3 * std::fabs(want)) << "step " << s;
      EXPECT_FALSE(r->skipped) << "step " << s;
    }
    EXPECT_EQ((*trainer)->State().updates, rc.steps - static_cast<int64_t>(rc.skips.size()));
    const Replica rep = (*trainer)->ReplicaOf(0);
    for (size_t i = 0; i < spec->params.size(); ++i) {
      EXPECT_LE(RelativeMaxError(rep.params[i], ReadNpy(c / absl::StrCat("ref_", spec->params[i], ".npy"))), 1e-3)
          << spec->params[i];
      for (size_t k = 0; k < rep.state[i].size(); ++k) {
        EXPECT_LE(RelativeMaxError(rep.state[i][k], ReadNpy(c / absl::StrCat("ref_state_", spec->params[i], "_", k, ".npy"))),
                  1e-3)
            << spec->params[i] << " optimizer state " << k;
      }
    }
    for (size_t i = 0; i < spec->buffers.size(); ++i) {
      EXPECT_LE(RelativeMaxError(rep.buffers[i], ReadNpy(c / absl::StrCat("ref_", spec->buffers[i], ".npy"))), 1e-3)
          << spec->buffers[i];
    }
  }
  EXPECT_EQ(cases, 5);
}

}  // namespace
}  // namespace npu::train
