#include "client/npy_header.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(NpyHeaderTest, ParsesNumpyStyle) {
  absl::StatusOr<NpyHeader> header =
      ParseNpyHeaderDict("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }    \n");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->descr, "<f2");
  EXPECT_FALSE(header->fortran_order);
  EXPECT_THAT(header->shape, ElementsAre(2, 3));
}

TEST(NpyHeaderTest, ParsesOtherSpellings) {
  // Key order, double quotes, no trailing comma, Python 2 longs, 1-tuples.
  absl::StatusOr<NpyHeader> header =
      ParseNpyHeaderDict("{\"shape\":(5L,),\"fortran_order\":True,\"descr\":\"|b1\"}");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->descr, "|b1");
  EXPECT_TRUE(header->fortran_order);
  EXPECT_THAT(header->shape, ElementsAre(5));
}

TEST(NpyHeaderTest, ScalarShape) {
  absl::StatusOr<NpyHeader> header =
      ParseNpyHeaderDict("{'descr': '<i4', 'fortran_order': False, 'shape': (), }");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_TRUE(header->shape.empty());
}

TEST(NpyHeaderTest, FormatsAsNumpyDoes) {
  EXPECT_EQ(FormatNpyHeaderDict({"<f4", false, {2, 3}}),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(FormatNpyHeaderDict({"<f4", false, {7}}),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }");
  EXPECT_EQ(FormatNpyHeaderDict({"|b1", false, {}}),
            "{'descr': '|b1', 'fortran_order': False, 'shape': (), }");
}

TEST(NpyHeaderTest, RejectsDuplicatesAndJunk) {
  EXPECT_THAT(std::string(ParseNpyHeaderDict("{'descr': '<f4', 'descr': '<f4'}").status().message()),
              HasSubstr("appears twice"));
  EXPECT_THAT(std::string(ParseNpyHeaderDict(
                              "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk")
                              .status()
                              .message()),
              HasSubstr("after the closing"));
  EXPECT_THAT(std::string(ParseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, "
                                             "'shape': (1 2)}")
                              .status()
                              .message()),
              HasSubstr("expected ',' or ')'"));
  EXPECT_FALSE(ParseNpyHeaderDict("").ok());
  EXPECT_FALSE(ParseNpyHeaderDict("{").ok());
}

// A header of a million dimensions is refused at the 65th, not stored.
TEST(NpyHeaderTest, RankIsBounded) {
  std::string many = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 100000; ++i) many += "1, ";
  many += ")}";
  EXPECT_THAT(std::string(ParseNpyHeaderDict(many).status().message()), HasSubstr("more than 64 dimensions"));
  std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 64; ++i) ok += "1, ";
  ok += ")}";
  EXPECT_TRUE(ParseNpyHeaderDict(ok).ok());
}

}  // namespace
}  // namespace npu::client
