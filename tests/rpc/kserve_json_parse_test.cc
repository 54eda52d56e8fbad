// Client JSON is bounded before it is parsed: nesting deeper than the limit
// and more values than the limit are refused with the offset where they
// passed it, in every place a REST body holds JSON (parameters, shape, data,
// a repository request's body), and error excerpts of huge values are cut
// without serialising them. Before the bounds a 100,000-deep "parameters"
// value crashed the process on the first copy or dump of it.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/rpc/kserve_http_infer.h"
#include "server/rpc/kserve_json_parse.h"
#include "server/rpc/kserve_json_tensor.h"

namespace npu::rpc {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string Nested(char open, char close, size_t depth, const std::string& inner = "1") {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += open == '{' ? "{\"k\":" : std::string(1, open);
  s += inner;
  s.append(depth, close);
  return s;
}

constexpr size_t kHostileDepth = 100000;

TEST(KserveJsonParseTest, DepthIsBoundedBeforeParsing) {
  auto deep = ParseClientJson(Nested('[', ']', kHostileDepth));
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.status().message(), HasSubstr("the request's JSON nests arrays deeper than 32 levels (at byte 32)"));
  auto objects = ParseClientJson(Nested('{', '}', kHostileDepth));
  EXPECT_THAT(objects.status().message(), HasSubstr("nests objects deeper than 32 levels"));
  // At the limit it parses; brackets inside strings do not count.
  EXPECT_TRUE(ParseClientJson(Nested('[', ']', 32)).ok());
  EXPECT_TRUE(ParseClientJson("[\"" + std::string(1000, '[') + "\\\"[[\"]").ok());
  EXPECT_THAT(ParseClientJson("{\"a\": ]").status().message(), HasSubstr("the request body is not valid JSON"));
}

TEST(KserveJsonParseTest, ValueCountIsBounded) {
  JsonLimits limits;
  limits.max_values = 100;
  std::string many = "[0";
  for (int i = 0; i < 200; ++i) many += ",0";
  many += "]";
  auto parsed = ParseClientJson(many, limits);
  EXPECT_THAT(parsed.status().message(), HasSubstr("holds more than 100 values (at byte 198)"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("binary_data_size"));
  limits.max_values = 202;  // the array and its 201 elements
  EXPECT_TRUE(ParseClientJson(many, limits).ok());
  // Commas inside strings are not values.
  limits.max_values = 3;
  EXPECT_TRUE(ParseClientJson("[\",,,,,,,,,,,,\", 1]", limits).ok());
}

TEST(KserveJsonParseTest, ExcerptsAreCutNotSerialisedWhole) {
  json big = json::array();
  for (int i = 0; i < 1000000; ++i) big.push_back(i);
  EXPECT_EQ(JsonExcerpt(big), "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,1...");  // 37 bytes and "..."
  EXPECT_EQ(JsonExcerpt(json::parse(R"({"a":[1,2],"b":"x"})")), R"({"a":[1,2],"b":"x"})");
  EXPECT_EQ(JsonExcerpt(json(std::string(100000, 'q'))), "\"" + std::string(36, 'q') + "...");
  // A cut never splits a UTF-8 character.
  const std::string excerpt = JsonExcerpt(json("a" + std::string(30, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"));
  EXPECT_TRUE(json::accept(json(excerpt).dump())) << excerpt;
}

// The parser's message ends with the token it last read, which for an
// unterminated string is the rest of the body: it is quoted bounded (a
// fuzzer finding: a 22 KB key came back as a 22 KB error).
TEST(KserveJsonParseTest, AParseErrorQuotesABoundedPartOfTheBody) {
  for (const std::string& body : {R"({"inputs":[{")" + std::string(50000, 'k'),
                                  R"({"id":")" + std::string(50000, 'v') + "\x01\"}", R"({"id":)" + std::string(50000, '1') + "x}"}) {
    auto decoded = DecodeHttpInferRequest(body, std::nullopt, "m", "");
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(decoded.status().message(), HasSubstr("is not valid JSON: [json.exception."));
    // The token's first bytes and its length (a parse error), or the message's head and tail.
    EXPECT_THAT(decoded.status().message(), ::testing::AnyOf(HasSubstr("(50"), HasSubstr("[cut: the message has 50")))
        << std::string(decoded.status().message().substr(0, 400));
    EXPECT_LT(decoded.status().message().size(), 600u) << decoded.status().message().substr(0, 200);
  }
}

// Every place of an inference body that holds client JSON, 100,000 deep: a
// clear error, no crash.
TEST(KserveJsonParseTest, HostileNestingAnywhereInAnInferenceBodyIsRefused) {
  const std::string deep = Nested('[', ']', kHostileDepth);
  const std::string deep_object = Nested('{', '}', kHostileDepth);
  const std::string input = R"({"name":"x","datatype":"FP32","shape":[1],"data":[1])";
  for (const std::string& body : {
           R"({"parameters":{"p":)" + deep + R"(},"inputs":[]})",
           R"({"parameters":)" + deep_object + R"(,"inputs":[]})",
           R"({"inputs":[{"name":"x","datatype":"FP32","shape":)" + deep + R"(,"data":[1]}]})",
           R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":)" + deep + R"(}]})",
           R"({"inputs":[)" + input + R"(,"parameters":{"binary_data_size":)" + deep + R"(}}]})",
           R"({"inputs":[)" + input + R"(}],"outputs":[{"name":"y","parameters":)" + deep_object + R"(}]})",
           R"({"id":)" + deep + R"(,"inputs":[]})",
       }) {
    auto decoded = DecodeHttpInferRequest(body, std::nullopt, "m", "");
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << body.substr(0, 80);
    EXPECT_THAT(decoded.status().message(), HasSubstr("deeper than 32 levels")) << body.substr(0, 80);
  }
}

// Within the depth bound, the errors that quote a value quote a bounded excerpt of it.
TEST(KserveJsonParseTest, ErrorsQuoteBoundedExcerpts) {
  std::string wide = "[0";
  for (int i = 0; i < 100000; ++i) wide += ",0";
  wide += "]";
  for (const std::string& body : {
           R"({"parameters":{"p":)" + wide + R"(},"inputs":[]})",
           R"({"inputs":[{"name":"x","datatype":"FP32","shape":[)" + wide + R"(],"data":[1]}]})",
       }) {
    auto decoded = DecodeHttpInferRequest(body, std::nullopt, "m", "");
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(decoded.status().message(), HasSubstr("[0,0,0,0,0,"));
    EXPECT_LT(decoded.status().message().size(), 200u) << decoded.status().message().substr(0, 300);
  }
}

}  // namespace
}  // namespace npu::rpc
