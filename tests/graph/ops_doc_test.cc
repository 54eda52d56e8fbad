// docs/ops.md's op table is exactly what the registry generates.
#include <string>

#include "gtest/gtest.h"
#include "server/graph/ops_doc.h"
#include "tests/doc_section.h"

namespace npu::graph {
namespace {

TEST(OpsDocTest, DocsTableMatchesTheRegistry) {
  const auto section = npu::testing::DocSection(std::string(NPU_SOURCE_DIR) + "/docs/ops.md", "npu-ops-doc");
  ASSERT_TRUE(section.has_value()) << "docs/ops.md or its npu-ops-doc markers are missing";
  EXPECT_EQ(*section, OpsMarkdownTable()) << "docs/ops.md is out of date: regenerate its table with npu-ops-doc";
}

}  // namespace
}  // namespace npu::graph
