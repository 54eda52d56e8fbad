// The KServe v2 wire conversions, unit by unit: datatype names, JSON tensor
// data (FP16 rounding against hand-derived bit patterns, integer ranges),
// gRPC raw/typed contents, HTTP binary framing, and the HTTP status of each
// failure. The interop tests in tests/kserve/ drive the same code over real
// sockets.
#include <cmath>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/rpc/kserve_datatype.h"
#include "server/rpc/kserve_grpc_codec.h"
#include "server/rpc/kserve_http.h"
#include "server/rpc/kserve_http_infer.h"
#include "server/rpc/kserve_json_tensor.h"
#include "server/rpc/kserve_tensor.h"

namespace npu::rpc {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

graph::TensorType Type(v1::DataType dtype, graph::Shape shape) { return {dtype, std::move(shape)}; }

TEST(KserveDatatypeTest, ServedNamesMapBothWays) {
  const std::pair<const char*, v1::DataType> served[] = {{"FP16", v1::FLOAT16}, {"FP32", v1::FLOAT32},
                                                         {"INT32", v1::INT32},  {"INT8", v1::INT8},
                                                         {"BOOL", v1::BOOL},    {"INT64", v1::INT64}};
  for (const auto& [name, type] : served) {
    auto parsed = DataTypeFromKserve(name, "input \"x\"");
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, type);
    EXPECT_STREQ(KserveDataTypeName(type), name);
  }
}

TEST(KserveDatatypeTest, OtherProtocolNamesAreRefusedByName) {
  for (const char* name : {"UINT8", "UINT16", "UINT32", "UINT64", "INT16", "FP64", "BF16", "BYTES"}) {
    auto parsed = DataTypeFromKserve(name, "input \"x\"");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(std::string("input \"x\": datatype ") + name +
                                                     " is not supported by this server; it runs FP16, FP32"));
  }
  EXPECT_THAT(DataTypeFromKserve("fp32", "input \"x\"").status().message(), HasSubstr("unknown datatype \"fp32\""));
}

uint16_t HalfBitsOf(double value) {
  auto t = TensorFromJson(Type(v1::FLOAT16, {1}), json::array({value}), "x");
  EXPECT_TRUE(t.ok()) << t.status();
  uint16_t bits = 0;
  if (t.ok()) std::memcpy(&bits, t->data(), 2);
  return bits;
}

TEST(KserveJsonTensorTest, Fp16IsTheNearestHalfTiesToEven) {
  EXPECT_EQ(HalfBitsOf(1.0), 0x3c00);
  // Just above the tie between 1 and 1 + 2^-10: float32 would round it onto the tie.
  EXPECT_EQ(HalfBitsOf(1 + std::ldexp(1, -11) + std::ldexp(1, -40)), 0x3c01);
  EXPECT_EQ(HalfBitsOf(1 + std::ldexp(1, -11) - std::ldexp(1, -40)), 0x3c00);
  EXPECT_EQ(HalfBitsOf(1 + std::ldexp(1, -11)), 0x3c00);      // tie: to the even 1.0
  EXPECT_EQ(HalfBitsOf(1 + 3 * std::ldexp(1, -11)), 0x3c02);  // tie: to the even 1 + 2^-9
  EXPECT_EQ(HalfBitsOf(-2.5), 0xc100);
  EXPECT_EQ(HalfBitsOf(65504), 0x7bff);
  EXPECT_EQ(HalfBitsOf(65519.99), 0x7bff);
  EXPECT_EQ(HalfBitsOf(std::ldexp(1, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfBitsOf(std::ldexp(1, -25)), 0x0000);  // tie with 0: to the even 0
  EXPECT_EQ(HalfBitsOf(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(HalfBitsOf(-0.0), 0x8000);
  auto over = TensorFromJson(Type(v1::FLOAT16, {1}), json::array({65520.0}), "input \"x\"");
  EXPECT_THAT(over.status().message(),
              HasSubstr("input \"x\": element 0 of data (65520.0) is beyond FP16's largest value 65504"));
}

TEST(KserveJsonTensorTest, IntegersKeepTheirFullRangeAndNoMore) {
  const json data = json::parse("[-9223372036854775808, 9223372036854775807, 3.0]");
  auto t = TensorFromJson(Type(v1::INT64, {3}), data, "x");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->as<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(t->as<int64_t>()[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t->as<int64_t>()[2], 3);
  EXPECT_THAT(TensorFromJson(Type(v1::INT64, {1}), json::parse("[9223372036854775808]"), "x").status().message(),
              HasSubstr("outside INT64's range"));
  EXPECT_THAT(TensorFromJson(Type(v1::INT32, {1}), json::parse("[2147483648]"), "x").status().message(),
              HasSubstr("element 0 of data (2147483648) is outside INT32's range -2147483648..2147483647"));
  EXPECT_THAT(TensorFromJson(Type(v1::INT8, {2}), json::parse("[1, -129]"), "x").status().message(),
              HasSubstr("element 1 of data (-129) is outside INT8's range -128..127"));
  EXPECT_THAT(TensorFromJson(Type(v1::INT32, {1}), json::parse("[0.5]"), "x").status().message(),
              HasSubstr("is not an integer"));
}

TEST(KserveJsonTensorTest, NestedDataFollowsRowMajorOrderToTheTensorsRankOnly) {
  auto t = TensorFromJson(Type(v1::FLOAT32, {2, 2}), json::parse("[[1, 2], [3.5, -4]]"), "x");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(std::vector<float>(t->as<float>(), t->as<float>() + 4), ::testing::ElementsAre(1, 2, 3.5f, -4));
  EXPECT_THAT(TensorFromJson(Type(v1::FLOAT32, {4}), json::parse("[[1, 2], [3, 4]]"), "x").status().message(),
              HasSubstr("nests arrays deeper than the tensor's 1 dimension(s)"));
  EXPECT_THAT(TensorFromJson(Type(v1::FLOAT32, {2, 2}), json::parse("[[1, 2], [3]]"), "x").status().message(),
              HasSubstr("FP32[2,2] has 4 elements; data has 3"));
}

TEST(KserveJsonTensorTest, NonFiniteOutputsBecomeNull) {
  graph::HostTensor t = graph::HostTensor::Allocate(Type(v1::FLOAT32, {3}));
  t.mutable_as<float>()[0] = 0.1f;
  t.mutable_as<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  t.mutable_as<float>()[2] = -std::numeric_limits<float>::infinity();
  const json out = TensorToJson(t);
  EXPECT_EQ(static_cast<float>(out[0].get<double>()), 0.1f);  // the float, exactly
  EXPECT_TRUE(out[1].is_null());
  EXPECT_TRUE(out[2].is_null());
}

TEST(KserveGrpcCodecTest, RawInputsAreViewedNotCopied) {
  inference::ModelInferRequest req;
  req.set_model_name("m");
  auto* in = req.add_inputs();
  in->set_name("x");
  in->set_datatype("INT32");
  in->add_shape(2);
  req.add_raw_input_contents(std::string("\x01\0\0\0\xff\xff\xff\xff", 8));
  auto decoded = DecodeInferRequest(req);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const graph::HostTensor& t = decoded->inputs[0].tensor;
  EXPECT_EQ(reinterpret_cast<const char*>(t.data()), req.raw_input_contents(0).data());
  EXPECT_EQ(t.as<int32_t>()[1], -1);
}

TEST(KserveGrpcCodecTest, TypedInTypedOutUnlessAnOutputIsFp16) {
  InferResult result{"m", "1", "id", {}, {}};
  graph::HostTensor b = graph::HostTensor::Allocate(Type(v1::BOOL, {2}));
  b.mutable_as<uint8_t>()[0] = 1;
  b.mutable_as<uint8_t>()[1] = 0;
  result.outputs.push_back({"b", b});
  inference::ModelInferResponse typed;
  EncodeInferResponse(result, /*raw=*/false, &typed);
  EXPECT_EQ(typed.raw_output_contents_size(), 0);
  EXPECT_THAT(typed.outputs(0).contents().bool_contents(), ::testing::ElementsAre(true, false));

  result.outputs.push_back({"h", graph::HostTensor::Allocate(Type(v1::FLOAT16, {1}))});
  inference::ModelInferResponse raw;
  EncodeInferResponse(result, /*raw=*/false, &raw);
  ASSERT_EQ(raw.raw_output_contents_size(), 2);
  EXPECT_EQ(raw.raw_output_contents(0), std::string("\x01\x00", 2));
  EXPECT_FALSE(raw.outputs(0).has_contents());
}

TEST(KserveTensorTest, RawBytesAreViewedWhenAlignedAndCopiedWhenNot) {
  alignas(16) char bytes[20] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0};
  const graph::TensorType type = Type(v1::INT32, {4});
  auto viewed = ViewRawTensor(type, absl::string_view(bytes, 16), "x", "it");
  ASSERT_TRUE(viewed.ok()) << viewed.status();
  EXPECT_EQ(reinterpret_cast<const char*>(viewed->data()), bytes);
  auto copied = ViewRawTensor(type, absl::string_view(bytes + 4, 16), "x", "it");  // 4 bytes in: not on 16
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_NE(reinterpret_cast<const char*>(copied->data()), bytes + 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copied->data()) % 16, 0u);
  EXPECT_THAT(std::vector<int32_t>(copied->as<int32_t>(), copied->as<int32_t>() + 4), ::testing::ElementsAre(2, 3, 4, 5));
}

TEST(KserveHttpInferTest, BinaryInputsComeFromTheBodyInOrder) {
  const std::string header =
      R"({"inputs": [{"name": "a", "shape": [2], "datatype": "INT8", "parameters": {"binary_data_size": 2}},)"
      R"( {"name": "b", "shape": [1], "datatype": "FP32", "data": [0.25]},)"
      R"( {"name": "c", "shape": [1], "datatype": "INT8", "parameters": {"binary_data_size": 1}}],)"
      R"( "outputs": [{"name": "y", "parameters": {"binary_data": true}}, {"name": "z"}]})";
  const std::string body = header + std::string("\x05\xfb\x7f", 3);
  auto decoded = DecodeHttpInferRequest(body, header.size(), "m", "");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const auto& inputs = decoded->request.inputs;
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0].tensor.as<int8_t>()[0], 5);
  EXPECT_EQ(inputs[0].tensor.as<int8_t>()[1], -5);
  EXPECT_EQ(inputs[1].tensor.as<float>()[0], 0.25f);
  EXPECT_EQ(inputs[2].tensor.as<int8_t>()[0], 127);
  EXPECT_THAT(decoded->binary_outputs, ::testing::ElementsAre(true, false));
}

TEST(KserveHttpInferTest, BinaryOutputsFollowTheJsonWithTheirSizes) {
  InferResult result{"m", "1", "", {}, {}};
  graph::HostTensor y = graph::HostTensor::Allocate(Type(v1::INT32, {1}));
  y.mutable_as<int32_t>()[0] = 0x01020304;
  result.outputs.push_back({"y", y});
  result.outputs.push_back({"z", y});
  HttpInferRequest asked;
  asked.binary_outputs = {true, false};
  const HttpInferResponse r = EncodeHttpInferResponse(result, asked);
  ASSERT_TRUE(r.binary);
  const json doc = json::parse(r.body.substr(0, r.header_length));
  EXPECT_EQ(doc["outputs"][0]["parameters"]["binary_data_size"], 4);
  EXPECT_FALSE(doc["outputs"][0].contains("data"));
  EXPECT_EQ(doc["outputs"][1]["data"], json::array({0x01020304}));
  EXPECT_EQ(r.body.substr(r.header_length), std::string("\x04\x03\x02\x01", 4));
}

TEST(KserveHttpTest, EveryFailureHasItsHttpStatus) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace npu::rpc
