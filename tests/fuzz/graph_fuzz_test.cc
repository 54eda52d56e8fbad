// The structure-aware graph fuzzer's generator and oracle (fuzz/), run on
// seeds in CI: every generated case must plan and run to OK or a clear status,
// return its inferred types, read no memory it did not write, and match the
// float64 reference where one exists. The inputs libFuzzer found bugs with
// (tests/fuzz/regressions/) are replayed too. NPU_FUZZ_SEEDS=N runs N seeds
// (a longer seeded run than CI's).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "fuzz/case_check.h"
#include "fuzz/choice_source.h"
#include "fuzz/graph_generator.h"
#include "fuzz/op_reference.h"

namespace npu::fuzz {
namespace {

uint64_t SeedCount() {
  const char* env = std::getenv("NPU_FUZZ_SEEDS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 1300;
}

TEST(GraphFuzzTest, SeededCasesKeepTheOracle) {
  const GeneratorLimits limits;
  CaseChecker checker;
  const uint64_t seeds = SeedCount();
  int planned = 0, ran = 0, referenced = 0, deep = 0, fused = 0, findings = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const auto start = std::chrono::steady_clock::now();
    SeededSource src(seed);
    const FuzzCase c = GenerateCase(src, limits);
    const CaseOutcome o = checker.Check(c, limits);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(o.finding, "") << "seed " << seed << "\n" << (++findings <= 3 ? DescribeCase(c) : "");
    planned += o.planned;
    ran += o.ran;
    fused += o.fused;
    referenced += o.nodes_referenced;
    deep += o.ran && c.graph.nodes_size() >= 3;
    if (std::getenv("NPU_FUZZ_VERBOSE") != nullptr) {  // what the cases reach, for tuning the generator
      std::string ops;
      for (const auto& n : c.graph.nodes()) ops += " " + n.op_type();
      std::printf("seed %llu (%.1f ms): %s:%s\n", static_cast<unsigned long long>(seed), ms,
                  o.ran ? "ran" : o.status.ToString().substr(0, 200).c_str(), ops.c_str());
    }
  }
  // The generator must reach execution, not only validation: most cases plan,
  // many run, several nodes deep, and nodes get checked against the reference.
  EXPECT_GE(planned, seeds * 5 / 10) << "of " << seeds;
  EXPECT_GE(ran, seeds * 3 / 10) << "of " << seeds;
  EXPECT_GE(deep, seeds / 10) << "of " << seeds;
  EXPECT_GE(referenced, static_cast<int>(seeds / 4)) << "nodes compared with the float64 reference";
  EXPECT_GE(fused, seeds / 20) << "runs of fused plans compared with the plain plan";
  std::printf("%llu seeds: %d planned, %d ran (%d with >= 3 nodes, %d fused), %d nodes checked against float64\n",
              static_cast<unsigned long long>(seeds), planned, ran, deep, fused, referenced);
}

TEST(GraphFuzzTest, TheSameChoicesMakeTheSameCase) {
  for (uint64_t seed : {1u, 7u, 42u}) {
    SeededSource a(seed), b(seed);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(GenerateCase(a).graph, GenerateCase(b).graph));
  }
}

// Each file is a libFuzzer input (BytesSource choices) that once found a bug.
TEST(GraphFuzzTest, InputsThatFoundBugsStayFixed) {
  const std::filesystem::path dir = std::filesystem::path(NPU_SOURCE_DIR) / "tests/fuzz/regressions";
  const GeneratorLimits limits;
  CaseChecker checker;
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    std::ifstream f(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    BytesSource src(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const FuzzCase c = GenerateCase(src, limits);
    const CaseOutcome o = checker.Check(c, limits);
    EXPECT_EQ(o.finding, "") << entry.path().filename() << "\n" << DescribeCase(c);
    ++replayed;
  }
  EXPECT_GT(replayed, 0);
}

// The reference itself, on values whose results follow from IEEE 754 and docs/ops.md's rules.
graph::HostTensor Tensor(graph::DataType dtype, const std::vector<double>& values) {
  graph::HostTensor t = graph::HostTensor::Allocate({dtype, {static_cast<int64_t>(values.size())}});
  for (size_t k = 0; k < values.size(); ++k) {
    switch (dtype) {
      case v1::FLOAT32: t.mutable_as<float>()[k] = static_cast<float>(values[k]); break;
      case v1::INT64: t.mutable_as<int64_t>()[k] = static_cast<int64_t>(values[k]); break;
      case v1::INT32: t.mutable_as<int32_t>()[k] = static_cast<int32_t>(values[k]); break;
      default: ADD_FAILURE() << "unused dtype";
    }
  }
  return t;
}

v1::Node NodeOf(const std::string& op, int to = -1) {
  v1::Node n;
  n.set_name("n");
  n.set_op_type(op);
  if (to >= 0) (*n.mutable_attributes())["to"].set_i(to);
  return n;
}

TEST(OpReferenceTest, FollowsTheDocumentedRules) {
  // Cast: 200 wraps to -56 in INT8; 1e10 saturates in INT32; fp32 -> fp16 rounds to nearest even.
  auto i32 = Tensor(v1::INT32, {200, -129});
  auto r = ReferenceFor(NodeOf("Cast", v1::INT8), {&i32}, {v1::INT8, {2}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ints, (std::vector<int64_t>{-56, 127}));
  auto f = Tensor(v1::FLOAT32, {1e10, -2.7, 65519.0, 65520.0});
  r = ReferenceFor(NodeOf("Cast", v1::INT32), {&f}, {v1::INT32, {4}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ints, (std::vector<int64_t>{2147483647, -2, 65519, 65520}));
  r = ReferenceFor(NodeOf("Cast", v1::FLOAT16), {&f}, {v1::FLOAT16, {4}}, false);
  ASSERT_TRUE(r);
  EXPECT_TRUE(std::isinf(r->values[0]));
  EXPECT_EQ(r->values[1], -2.69921875);  // the nearest binary16 to -2.7
  EXPECT_EQ(r->values[2], 65504.0);      // below the halfway point 65520
  EXPECT_TRUE(std::isinf(r->values[3]));  // ties to even: 65536, past the range
  r = ReferenceFor(NodeOf("Cast", v1::FLOAT16), {&f}, {v1::FLOAT16, {4}}, true);  // a saturating preset
  EXPECT_EQ(r->values[0], 65504.0);
  EXPECT_EQ(r->values[3], 65504.0);
  // INT64 Div: truncation, by zero 0, INT64_MIN / -1 wraps.
  auto a = Tensor(v1::INT64, {7, -7, 5, -9.2233720368547758e18});
  auto b = Tensor(v1::INT64, {2, 2, 0, -1});
  r = ReferenceFor(NodeOf("Div"), {&a, &b}, {v1::INT64, {4}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ints, (std::vector<int64_t>{3, -3, 0, INT64_MIN}));
}

TEST(OpReferenceTest, ComparesExactlyWhereTheOpIsExact) {
  auto x = Tensor(v1::FLOAT32, {1.0, 2.0});
  auto r = ReferenceFor(NodeOf("Neg"), {&x}, {v1::FLOAT32, {2}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(CompareToReference(Tensor(v1::FLOAT32, {-1.0, -2.0}), *r), "");
  EXPECT_NE(CompareToReference(Tensor(v1::FLOAT32, {-1.0, -2.0000002}), *r), "");
  EXPECT_EQ(ReferenceFor(NodeOf("MatMul"), {&x, &x}, {v1::FLOAT32, {}}, false), std::nullopt);
}

}  // namespace
}  // namespace npu::fuzz
