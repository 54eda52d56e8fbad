// Einsum, LSTM and GRU refuse what they cannot run at plan time with
// INVALID_ARGUMENT naming the node and the equation, input or attribute
// (results are checked against torch in ops_torch_test).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/one_node.h"
#include "tests/graph/plan_error.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;
using testing::OneNode;
using testing::PlanError;

std::vector<double> Fill(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return std::vector<double>(static_cast<size_t>(n), 0.5);
}

OneNode Einsum(const std::string& eq, Shape a = {2, 3}, Shape b = {3, 4}) {
  return std::move(OneNode("Einsum").Input("a", v1::FLOAT32, a, Fill(a)).Input("b", v1::FLOAT32, b, Fill(b)).Str(
      "equation", eq));
}

TEST(EinsumErrorsTest, NamesTheEquationsFault) {
  EXPECT_THAT(PlanError(Einsum("ij->ij")), HasSubstr("has 1 operand terms for 2 inputs"));
  EXPECT_THAT(PlanError(Einsum("ij,jkl->ik")), HasSubstr("has 3 labels for input \"b\" of rank 2"));
  EXPECT_THAT(PlanError(Einsum("ij,ik->jk", {2, 3}, {3, 4})), HasSubstr("of size 2 and 3"));
  EXPECT_THAT(PlanError(Einsum("i1,jk->ik")), HasSubstr("has '1'"));
  EXPECT_THAT(PlanError(Einsum("ii,jk->ik", {3, 3}, {3, 4})), HasSubstr("repeats a label (a diagonal) is not supported"));
  EXPECT_THAT(PlanError(Einsum("ij,jk->iz")), HasSubstr("an output label is in no operand"));
  EXPECT_THAT(PlanError(Einsum("ij,jk->ii")), HasSubstr("the output repeats a label"));
  EXPECT_THAT(PlanError(Einsum("...ij,...jk->ik", {2, 2, 3}, {2, 3, 4})), HasSubstr("must keep the operands' \"...\""));
  EXPECT_THAT(PlanError(Einsum("......ij,jk->ik")), HasSubstr("has \"...\" twice"));
  EXPECT_THAT(PlanError(Einsum("i,j->", {70000}, {70000})), HasSubstr("products on the Vector unit, more than"));
  EXPECT_THAT(PlanError(std::move(OneNode("Einsum").Input("a", v1::FLOAT32, {2}, {1, 2}))),
              HasSubstr("attribute \"equation\" is required"));
}

// x [2, 3, 4] (seq, batch, input), hidden 5; W and R for `gates`.
OneNode Rnn(const std::string& op, int64_t gates, Shape w = {}, Shape r = {}) {
  if (w.empty()) w = {1, gates * 5, 4};
  if (r.empty()) r = {1, gates * 5, 5};
  return std::move(OneNode(op)
                       .Input("x", v1::FLOAT32, {2, 3, 4}, Fill({2, 3, 4}))
                       .Const("w", v1::FLOAT32, w, Fill(w))
                       .Const("r", v1::FLOAT32, r, Fill(r)));
}

TEST(RnnErrorsTest, NamesTheInputOrAttribute) {
  for (const auto& [op, gates] : std::vector<std::pair<std::string, int64_t>>{{"LSTM", 4}, {"GRU", 3}}) {
    SCOPED_TRACE(op);
    EXPECT_THAT(PlanError(Rnn(op, gates, {1, gates * 5, 3})), HasSubstr("input \"w\" FLOAT32[1,"));
    EXPECT_THAT(PlanError(Rnn(op, gates, {2, gates * 5, 4}, {2, gates * 5, 5})), HasSubstr("(direction forward"));
    EXPECT_THAT(PlanError(Rnn(op, gates, {}, {1, gates * 5, 4})), HasSubstr("must be [1,"));
    EXPECT_THAT(PlanError(Rnn(op, gates).Int("hidden_size", 4)), HasSubstr("\"hidden_size\" = 4 does not match"));
    EXPECT_THAT(PlanError(Rnn(op, gates).Int("layout", 1)), HasSubstr("\"layout\" = 1 is not supported"));
    EXPECT_THAT(PlanError(Rnn(op, gates).Str("direction", "both")), HasSubstr("\"direction\""));
    EXPECT_THAT(PlanError(Rnn(op, gates).Const("b", v1::FLOAT32, {1, 5}, Fill({1, 5}))), HasSubstr("must be [1,"));
    EXPECT_THAT(PlanError(Rnn(op, gates).None().Const("lens", v1::FLOAT32, {3}, {1, 1, 1})),
                HasSubstr("must be INT32 or INT64"));
    EXPECT_THAT(PlanError(Rnn(op, gates).None().None().Const("h0", v1::FLOAT32, {1, 2, 5}, Fill({1, 2, 5}))),
                HasSubstr("must be [1,3,5]"));
  }
  EXPECT_THAT(PlanError(Rnn("LSTM", 4).Int("input_forget", 1)), HasSubstr("\"input_forget\" = 1 is not supported"));
  EXPECT_THAT(PlanError(std::move(OneNode("GRU")
                                      .Input("x", v1::FLOAT32, {2, 3, 0}, {})
                                      .Const("w", v1::FLOAT32, {1, 15, 0}, {})
                                      .Const("r", v1::FLOAT32, {1, 15, 5}, Fill({1, 15, 5})))),
              HasSubstr("only the sequence and the batch may be empty"));
}

}  // namespace
}  // namespace npu::graph
