// docs/ops.md's op table is exactly what the registry and the trainer's
// gradient rules generate, and docs/training.md's list of the ops with a
// gradient is the rules' (npu-ops-doc prints both).
#include <string>

#include "gtest/gtest.h"
#include "server/graph/ops_doc.h"
#include "server/train/gradient_docs.h"
#include "tests/doc_section.h"

namespace npu::train {
namespace {

TEST(GradientDocsTest, OpsTableMatchesTheRegistryAndTheGradientRules) {
  const auto section = npu::testing::DocSection(std::string(NPU_SOURCE_DIR) + "/docs/ops.md", "npu-ops-doc");
  ASSERT_TRUE(section.has_value()) << "docs/ops.md or its npu-ops-doc markers are missing";
  EXPECT_EQ(*section, graph::OpsMarkdownTable({GradientColumn()}))
      << "docs/ops.md is out of date: regenerate its table with npu-ops-doc";
}

TEST(GradientDocsTest, TrainingDocListsTheOpsWithGradients) {
  const auto section = npu::testing::DocSection(std::string(NPU_SOURCE_DIR) + "/docs/training.md", "gradient-ops");
  ASSERT_TRUE(section.has_value()) << "docs/training.md or its gradient-ops markers are missing";
  EXPECT_EQ(*section, GradientOpsMarkdown())
      << "docs/training.md is out of date: regenerate its list with npu-ops-doc gradients";
}

TEST(GradientDocsTest, TheColumnTellsRulesFlatOpsAndNone) {
  const graph::OpsTableColumn c = GradientColumn();
  EXPECT_EQ(c.cell("Erf"), "yes");
  EXPECT_EQ(c.cell("Floor"), "zero");
  EXPECT_EQ(c.cell("SGDUpdate"), "-");
}

}  // namespace
}  // namespace npu::train
