#include "client/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client {
namespace {

using ::testing::ElementsAre;

TEST(HostTensorTest, DataTypeSizes) {
  EXPECT_EQ(DataTypeSize(npu::v1::FLOAT16), 2u);
  EXPECT_EQ(DataTypeSize(npu::v1::FLOAT32), 4u);
  EXPECT_EQ(DataTypeSize(npu::v1::INT32), 4u);
  EXPECT_EQ(DataTypeSize(npu::v1::INT8), 1u);
  EXPECT_EQ(DataTypeSize(npu::v1::BOOL), 1u);
  EXPECT_EQ(DataTypeSize(npu::v1::INT64), 8u);
  EXPECT_EQ(DataTypeSize(npu::v1::DATA_TYPE_UNSPECIFIED), 0u);
}

TEST(HostTensorTest, ElementCount) {
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{}), 1);
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{0, 5}), 0);
  EXPECT_FALSE(ElementCount(std::vector<int64_t>{-1, 5}).ok());
  EXPECT_FALSE(ElementCount(std::vector<int64_t>{1ll << 40, 1ll << 40}).ok());
}

TEST(HostTensorTest, Float32RoundTrip) {
  absl::StatusOr<npu::v1::Tensor> tensor =
      MakeFloatTensor(npu::v1::FLOAT32, {3}, std::vector<float>{1.5f, -2.0f, 1e-30f});
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->data().size(), 12u);
  EXPECT_THAT(*TensorToFloats(*tensor), ElementsAre(1.5f, -2.0f, 1e-30f));
}

TEST(HostTensorTest, Float16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half: ties to even give 1.
  absl::StatusOr<npu::v1::Tensor> tensor = MakeFloatTensor(
      npu::v1::FLOAT16, {2, 2}, std::vector<float>{1.0f + 1.0f / 2048, 0.1f, 65520.0f, -0.0f});
  ASSERT_TRUE(tensor.ok());
  uint16_t bits[4];
  std::memcpy(bits, tensor->data().data(), 8);
  EXPECT_EQ(bits[0], 0x3c00);
  EXPECT_EQ(bits[1], 0x2e66);  // 0.0999755859375
  EXPECT_EQ(bits[2], 0x7c00);  // overflow -> inf
  EXPECT_EQ(bits[3], 0x8000);
  std::vector<float> back = *TensorToFloats(*tensor);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_FLOAT_EQ(back[1], 0.0999755859375f);
  EXPECT_TRUE(std::isinf(back[2]));
}

TEST(HostTensorTest, MakeFloatTensorChecks) {
  EXPECT_FALSE(MakeFloatTensor(npu::v1::FLOAT32, {2, 2}, std::vector<float>{1, 2, 3}).ok());
  EXPECT_FALSE(MakeFloatTensor(npu::v1::INT32, {1}, std::vector<float>{1}).ok());
  EXPECT_TRUE(MakeFloatTensor(npu::v1::FLOAT32, {}, std::vector<float>{4}).ok());
}

TEST(HostTensorTest, IntegerTypesToFloats) {
  npu::v1::Tensor tensor;
  tensor.set_dtype(npu::v1::INT8);
  tensor.add_shape(3);
  tensor.set_data(std::string("\xff\x7f\x00", 3));
  EXPECT_THAT(*TensorToFloats(tensor), ElementsAre(-1.0f, 127.0f, 0.0f));
  tensor.set_data(std::string("\xff\x7f", 2));
  EXPECT_FALSE(TensorToFloats(tensor).ok());  // bytes do not match the shape
}

TEST(HostTensorTest, NamesAndShapes) {
  EXPECT_EQ(DataTypeName(npu::v1::FLOAT16), "float16");
  EXPECT_EQ(DataTypeName(npu::v1::BOOL), "bool");
  EXPECT_EQ(ShapeString(std::vector<int64_t>{4, 8}), "[4, 8]");
  EXPECT_EQ(ShapeString(std::vector<int64_t>{}), "[]");
}

}  // namespace
}  // namespace npu::client
