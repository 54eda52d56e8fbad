#include "client/cli/cli_status.h"

#include "absl/strings/cord.h"

namespace npu::client::cli {
namespace {

constexpr char kUsagePayloadUrl[] = "type.npuserve/npu.cli.UsageError";

}  // namespace

absl::Status UsageError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kUsagePayloadUrl, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayloadUrl).has_value();
}

int ReportError(const absl::Status& status, std::ostream& err) {
  if (status.ok()) return kExitOk;
  if (IsUsageError(status)) {
    err << "npu: error: " << status.message() << "\n";
    return kExitUsageError;
  }
  err << "npu: error: " << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return kExitServerError;
}

}  // namespace npu::client::cli
