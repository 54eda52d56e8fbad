// INT32 reductions are exact integer arithmetic (ONNX, NumPy): found by the
// graph fuzzer, which saw ReduceSum of INT32 values past INT32_MAX convert a
// float out of int32's range (undefined behaviour) and, below that, sums and
// maxima past 2^24 lose their low bits in fp32.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

// op over x: INT32[rows, cols], reducing `axes`, keepdims 0.
std::vector<int32_t> Reduce(const std::string& op, const std::vector<int32_t>& x, int64_t rows, int64_t cols,
                            std::vector<int64_t> axes) {
  v1::Graph g;
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::INT32);
  in->add_shape(rows);
  in->add_shape(cols);
  v1::Node* n = g.add_nodes();
  n->set_name("r");
  n->set_op_type(op);
  n->add_inputs(std::string("x"));
  n->add_outputs(std::string("y"));
  for (int64_t a : axes) (*n->mutable_attributes())["axes"].mutable_ints()->add_values(a);
  (*n->mutable_attributes())["keepdims"].set_i(0);
  g.add_outputs(std::string("y"));
  HostTensor t = HostTensor::Allocate({v1::INT32, {rows, cols}});
  for (size_t i = 0; i < x.size(); ++i) t.mutable_as<int32_t>()[i] = x[i];
  auto r = testing::PlanAndRun(g, {t});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  const HostTensor& y = r->outputs[0];
  EXPECT_EQ(y.type().dtype, v1::INT32);
  return std::vector<int32_t>(y.as<int32_t>(), y.as<int32_t>() + y.type().elements());
}

constexpr int32_t kMax = INT32_MAX, kMin = INT32_MIN;
constexpr int32_t k2p24 = 1 << 24;

TEST(ReduceInt32Test, SumsWrapAsIntegersDo) {
  // Along the rows (the contiguous path) and down the columns (the vectorised one).
  EXPECT_EQ(Reduce("ReduceSum", {kMax, 1, kMin, -1}, 2, 2, {1}), (std::vector<int32_t>{kMin, kMax}));
  EXPECT_EQ(Reduce("ReduceSum", {kMax, kMin, 1, -1}, 2, 2, {0}), (std::vector<int32_t>{kMin, kMax}));
  EXPECT_EQ(Reduce("ReduceSum", {k2p24 + 1, 2, 3, 4}, 2, 2, {1}), (std::vector<int32_t>{k2p24 + 3, 7}));
}

TEST(ReduceInt32Test, MaxAndMinKeepEveryBit) {
  EXPECT_EQ(Reduce("ReduceMax", {k2p24 + 1, k2p24, kMin, kMin + 1}, 2, 2, {1}),
            (std::vector<int32_t>{k2p24 + 1, kMin + 1}));
  EXPECT_EQ(Reduce("ReduceMin", {k2p24 + 1, k2p24 + 3, kMax - 1, kMax}, 2, 2, {0}),
            (std::vector<int32_t>{k2p24 + 1, k2p24 + 3}));
}

TEST(ReduceInt32Test, MeanTruncatesTowardZeroWithoutOverflow) {
  // (7 + 8) / 2 = 7.5 -> 7; (-7 - 8) / 2 = -7.5 -> -7; (MAX + MAX) / 2 = MAX exactly.
  EXPECT_EQ(Reduce("ReduceMean", {7, 8, -7, -8, kMax, kMax}, 3, 2, {1}), (std::vector<int32_t>{7, -7, kMax}));
}

TEST(ReduceInt32Test, ArgMaxTellsApartValuesPast2To24) {
  v1::Graph g;
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::INT32);
  in->add_shape(2);
  in->add_shape(3);
  v1::Node* n = g.add_nodes();
  n->set_name("a");
  n->set_op_type("ArgMax");
  n->add_inputs(std::string("x"));
  n->add_outputs(std::string("y"));
  (*n->mutable_attributes())["axis"].set_i(1);
  (*n->mutable_attributes())["keepdims"].set_i(0);
  g.add_outputs(std::string("y"));
  HostTensor t = HostTensor::Allocate({v1::INT32, {2, 3}});
  const int32_t x[] = {k2p24, k2p24 + 1, k2p24 - 1, kMin, kMax - 1, kMax};
  std::copy(std::begin(x), std::end(x), t.mutable_as<int32_t>());
  auto r = testing::PlanAndRun(g, {t});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outputs[0].type().elements(), 2);
  EXPECT_EQ(r->outputs[0].as<int64_t>()[0], 1);
  EXPECT_EQ(r->outputs[0].as<int64_t>()[1], 2);
}

}  // namespace
}  // namespace npu::graph
