// The ONNX importer's list of supported ops (onnx/supported_ops.cc) is the
// server's op registry: neither may name an op the other lacks.
#include "gtest/gtest.h"
#include "onnx/supported_ops.h"
#include "server/graph/op_registry.h"

namespace npu::graph {
namespace {

TEST(OnnxSupportedOpsTest, MatchesTheOpRegistry) {
  for (const auto& [name, attrs] : onnxio::SupportedOps()) {
    EXPECT_NE(OpRegistry::Global().Find(name), nullptr) << name << " is importable but not registered";
  }
  for (const OpDef* op : OpRegistry::Global().All()) {
    EXPECT_TRUE(onnxio::SupportedOps().contains(op->name)) << op->name << " is registered but not importable";
  }
}

}  // namespace
}  // namespace npu::graph
