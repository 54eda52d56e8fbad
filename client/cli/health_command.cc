#include "client/cli/health_command.h"

namespace npu::client::cli {

absl::StatusOr<bool> RunHealthCommand(Client& client, std::ostream& out) {
  absl::StatusOr<ServingStatus> status = client.Health();
  if (!status.ok()) return status.status();
  out << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(*status) << "\n";
  return *status == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace npu::client::cli
