// The edge mapping: codes unchanged, messages bounded for the wire.
#include "server/rpc/grpc_status.h"

#include <string>

#include "gtest/gtest.h"

namespace npu::rpc {
namespace {

TEST(GrpcStatusTest, CodesAndShortMessagesCrossUnchanged) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const grpc::Status s = ToGrpcStatus(absl::NotFoundError("graph id \"g-1\" not found"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "graph id \"g-1\" not found");
}

TEST(GrpcStatusTest, LongMessagesAreCutToTheWireBound) {
  const std::string message = "node \"" + std::string(100000, 'x') + "\" (MatMul): inner dimensions 8 and 7 differ";
  const grpc::Status s = ToGrpcStatus(absl::InvalidArgumentError(message));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LE(s.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_EQ(s.error_message().rfind("node \"xxx", 0), 0u);
  EXPECT_NE(s.error_message().find("(MatMul): inner dimensions 8 and 7 differ"), std::string::npos);
}

}  // namespace
}  // namespace npu::rpc
