#include "server/core/device_names.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/graph/bounded_text.h"

namespace npu::core {

absl::StatusOr<DeviceRef> ParseDevice(absl::string_view text) {
  DeviceRef ref;
  if (text.empty()) return ref;
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "cuda:")) {
    ref.was_cuda = true;
  } else if (!absl::ConsumePrefix(&rest, "npu:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", graph::Quoted(text), " is not of the form npu:N (cuda:N is accepted too)"));
  }
  if (!absl::SimpleAtoi(rest, &ref.index) || ref.index < 0) {
    return absl::InvalidArgumentError(absl::StrCat("device ", graph::Quoted(text), ": ", graph::Quoted(rest), " is not a device index"));
  }
  return ref;
}

}  // namespace npu::core
