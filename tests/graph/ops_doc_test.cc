// docs/ops.md's op table is exactly what the registry generates.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "server/graph/ops_doc.h"

namespace npu::graph {
namespace {

TEST(OpsDocTest, DocsTableMatchesTheRegistry) {
  std::ifstream f(std::string(NPU_SOURCE_DIR) + "/docs/ops.md");
  ASSERT_TRUE(f) << "docs/ops.md is missing";
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- BEGIN npu-ops-doc -->\n", end = "<!-- END npu-ops-doc -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), OpsMarkdownTable())
      << "docs/ops.md is out of date: regenerate its table with npu-ops-doc";
}

}  // namespace
}  // namespace npu::graph
