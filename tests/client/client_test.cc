// The client without a server: channel configuration, status mapping, and
// that a call to a closed port fails cleanly as UNAVAILABLE.
#include "client/client.h"

#include <sstream>

#include "client/channel.h"
#include "client/cli/cli_status.h"
#include "client/cli/devices_command.h"
#include "client/cli/stats_command.h"
#include "client/cli/text_table.h"
#include "client/status_mapping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatusMappingTest, KeepsCodeAndMessage) {
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  absl::Status status =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "node \"fc1\" (MatMul): bad"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "node \"fc1\" (MatMul): bad");
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "")).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "")).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(ChannelTest, ServiceConfigCarriesPolicyAndRetry) {
  ClientOptions options;
  std::string json = MakeServiceConfigJson(options);
  EXPECT_THAT(json, HasSubstr(R"("loadBalancingConfig":[{"round_robin":{}}])"));
  EXPECT_THAT(json, HasSubstr(R"("retryableStatusCodes":["UNAVAILABLE"])"));
  EXPECT_THAT(json, HasSubstr(R"("name":[{}])"));  // every method

  options.retry_unavailable = false;
  options.load_balancing_policy = "pick_first";
  json = MakeServiceConfigJson(options);
  EXPECT_THAT(json, HasSubstr("pick_first"));
  EXPECT_THAT(json, Not(HasSubstr("retryPolicy")));
}

TEST(ClientTest, ConnectValidatesLocally) {
  EXPECT_EQ(Client::Connect("", {}).status().code(), absl::StatusCode::kInvalidArgument);
  ClientOptions tls;
  tls.root_cert_path = "/nonexistent/ca.pem";
  absl::Status status = Client::Connect("127.0.0.1:1", tls).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("/nonexistent/ca.pem"));
}

TEST(ClientTest, ClosedPortIsUnavailable) {
  ClientOptions options;
  options.timeout = absl::Seconds(10);
  options.bearer_token = "secret";
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect("127.0.0.1:1", options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->ListDevices().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*client)->Health().status().code(), absl::StatusCode::kUnavailable);
  npu::v1::Tensor tensor;
  tensor.set_dtype(npu::v1::FLOAT32);
  tensor.add_shape(1);
  tensor.set_data(std::string(4, '\0'));
  EXPECT_EQ((*client)->Upload(tensor).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*client)->Download("h").status().code(), absl::StatusCode::kUnavailable);

  std::ostringstream out, err;
  absl::Status status = cli::RunDevicesCommand(**client, out);
  EXPECT_EQ(cli::ReportError(status, err), cli::kExitServerError);
  EXPECT_THAT(err.str(), HasSubstr("npu: error: UNAVAILABLE: "));
}

TEST(CliTablesTest, DevicesAndStats) {
  npu::v1::ListDevicesResponse devices;
  npu::v1::DeviceInfo* device = devices.add_devices();
  device->set_id("npu:0");
  device->set_preset("ascend910");
  device->set_ai_cores(32);
  device->set_clock_mhz(1000);
  device->mutable_buffers()->set_l1_bytes(1 << 20);
  device->mutable_buffers()->set_ub_bytes(256 << 10);
  device->set_memory_capacity_bytes(uint64_t{32} << 30);
  device->set_memory_used_bytes(3 << 20);
  std::ostringstream out;
  cli::PrintDevices(devices, out);
  EXPECT_THAT(out.str(), HasSubstr("npu:0"));
  EXPECT_THAT(out.str(), HasSubstr("ascend910"));
  EXPECT_THAT(out.str(), HasSubstr("1024"));
  EXPECT_THAT(out.str(), HasSubstr("3.0 MiB / 32.0 GiB"));

  npu::v1::ServerStats stats;
  stats.set_runs_total(5);
  stats.set_runs_failed(1);
  npu::v1::DeviceStats* d = stats.add_devices();
  d->set_device("npu:0");
  d->mutable_utilization()->set_cube(0.25);
  std::ostringstream stats_out;
  cli::PrintStats(stats, stats_out);
  EXPECT_THAT(stats_out.str(), HasSubstr("runs 5 (1 failed)"));
  EXPECT_THAT(stats_out.str(), HasSubstr("25.0%"));
}

TEST(CliTablesTest, FormatBytes) {
  EXPECT_EQ(cli::FormatBytes(0), "0 B");
  EXPECT_EQ(cli::FormatBytes(1023), "1023 B");
  EXPECT_EQ(cli::FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(cli::FormatBytes(uint64_t{1} << 30), "1.0 GiB");
}

}  // namespace
}  // namespace npu::client
