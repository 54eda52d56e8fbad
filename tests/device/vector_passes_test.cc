// The one Vector pass table: a row for every kernel, the kernels' enums mapped
// onto it, and docs/device-model.md printing exactly it.
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "server/device/vector_passes.h"
#include "tests/doc_section.h"

namespace npu::device {
namespace {

TEST(VectorPassesTest, EveryKernelHasOneRowInEnumOrder) {
  int size = 0;
  const VectorPassEntry* table = VectorPassTable(&size);
  ASSERT_EQ(size, static_cast<int>(VectorKernel::kReduceLogSumExp) + 1);  // the last kernel
  for (int i = 0; i < size; ++i) {
    EXPECT_EQ(static_cast<int>(table[i].kernel), i) << table[i].name;
    EXPECT_GE(table[i].passes, 1) << table[i].name;
  }
}

TEST(VectorPassesTest, TheKernelsOpsMapOntoTheTable) {
  std::set<VectorKernel> unary;
  for (int i = 0; i <= static_cast<int>(kernels::UnaryOp::kClip); ++i) {
    unary.insert(KernelOf(static_cast<kernels::UnaryOp>(i)));
  }
  EXPECT_EQ(unary.size(), static_cast<size_t>(kernels::UnaryOp::kClip) + 1);  // one row each
  EXPECT_EQ(KernelOf(kernels::BinaryOp::kDiv), VectorKernel::kDiv);
  EXPECT_EQ(KernelOf(kernels::BinaryOp::kLess), VectorKernel::kCompare);
  // Transcendentals cost more than arithmetic, compositions more than their parts.
  EXPECT_EQ(VectorPasses(KernelOf(kernels::BinaryOp::kAdd)), 1);
  EXPECT_GT(VectorPasses(VectorKernel::kDiv), VectorPasses(VectorKernel::kMul));
  EXPECT_GT(VectorPasses(VectorKernel::kExp), VectorPasses(VectorKernel::kMul));
  EXPECT_GT(VectorPasses(VectorKernel::kSigmoid), VectorPasses(VectorKernel::kExp));
  EXPECT_GT(VectorPasses(VectorKernel::kGeluErf), VectorPasses(VectorKernel::kErf));
  EXPECT_GT(VectorPasses(VectorKernel::kPow), VectorPasses(VectorKernel::kExp) + VectorPasses(VectorKernel::kLog));
}

TEST(VectorPassesTest, DocsPrintTheTable) {
  const auto section = npu::testing::DocSection(std::string(NPU_SOURCE_DIR) + "/docs/device-model.md", "vector-passes");
  ASSERT_TRUE(section.has_value()) << "docs/device-model.md lacks its vector-passes markers";
  EXPECT_EQ(*section, VectorPassesMarkdown())
      << "docs/device-model.md is out of date: regenerate its pass table with `npu-ops-doc vector-passes`";
}

}  // namespace
}  // namespace npu::device
