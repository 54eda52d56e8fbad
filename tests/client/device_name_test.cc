#include "client/device_name.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client {
namespace {

using ::testing::HasSubstr;

TEST(NormalizeDeviceTest, AcceptedForms) {
  EXPECT_EQ(*NormalizeDevice("npu:0"), "npu:0");
  EXPECT_EQ(*NormalizeDevice("npu:7"), "npu:7");
  EXPECT_EQ(*NormalizeDevice("npu:007"), "npu:7");
  EXPECT_EQ(*NormalizeDevice("cuda:0"), "npu:0");
  EXPECT_EQ(*NormalizeDevice("cuda:3"), "npu:3");
  EXPECT_EQ(*NormalizeDevice(""), "npu:0");
}

TEST(NormalizeDeviceTest, RejectedFormsNameTheString) {
  for (const char* bad : {"cpu", "gpu:0", "npu", "npu:", "npu:-1", "npu:+1", "npu: 1", "npu:1x",
                          "cuda", "cuda:", "NPU:0", "npu:99999999999", "garbage"}) {
    absl::StatusOr<std::string> device = NormalizeDevice(bad);
    ASSERT_FALSE(device.ok()) << bad;
    EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(device.status().message()), HasSubstr(std::string("\"") + bad + "\""));
  }
}

TEST(NormalizeDeviceTest, CudaNamesAreRecognizedForTheNotice) {
  EXPECT_TRUE(IsCudaDeviceName("cuda:0"));
  EXPECT_FALSE(IsCudaDeviceName("npu:0"));
  EXPECT_FALSE(IsCudaDeviceName(""));
}

}  // namespace
}  // namespace npu::client
