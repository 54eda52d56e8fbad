// AuthTokens: the token file's format and the bearer-token check.
#include "server/core/auth_tokens.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(AuthTokensTest, ParsesTokensSkippingBlanksAndComments) {
  auto t = AuthTokens::Parse("# tokens\n\n  s3cret alice \nother\tbob\nthird alice\n", "tokens.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->size(), 3u);
  EXPECT_EQ(t->TenantFor("Bearer s3cret").value(), "alice");
  EXPECT_EQ(t->TenantFor("Bearer other").value(), "bob");
  EXPECT_EQ(t->TenantFor("bearer third").value(), "alice");
}

TEST(AuthTokensTest, MalformedFilesAreRefusedWithTheLine) {
  auto three = AuthTokens::Parse("a b c\n", "f");
  EXPECT_THAT(std::string(three.status().message()), HasSubstr("f:1"));
  auto twice = AuthTokens::Parse("x t1\ny t2\nx t3\n", "f");
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("f:3: token listed twice"));
  EXPECT_FALSE(AuthTokens::Parse("# only a comment\n", "f").ok());
  EXPECT_EQ(AuthTokens::Load("/nonexistent/tokens").status().code(), absl::StatusCode::kNotFound);
}

TEST(AuthTokensTest, MissingMalformedOrUnknownTokensAreUnauthenticatedAndNeverEchoed) {
  auto t = AuthTokens::Parse("s3cret alice\n", "f").value();
  for (const char* bad : {"", "s3cret", "Basic s3cret", "Bearer wrong-guess", "Bearer s3cret2"}) {
    auto r = t.TenantFor(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("s3cret"))) << bad;
    EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("wrong-guess"))) << bad;
  }
}

}  // namespace
}  // namespace npu::core
