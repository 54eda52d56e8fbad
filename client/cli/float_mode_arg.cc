#include "client/cli/float_mode_arg.h"

#include "absl/strings/str_cat.h"
#include "client/cli/cli_status.h"

namespace npu::client::cli {

absl::StatusOr<npu::v1::FloatMode> ParseFloatModeArg(const std::string& arg) {
  if (arg.empty()) return npu::v1::FLOAT_MODE_PRESET;
  if (arg == "saturation") return npu::v1::FLOAT_MODE_SATURATION;
  if (arg == "inf_nan") return npu::v1::FLOAT_MODE_INF_NAN;
  return UsageError(absl::InvalidArgumentError(
      absl::StrCat("--float-mode ", arg, " is not one of saturation, inf_nan (the default is the preset's)")));
}

const char* FloatModeWord(npu::v1::FloatMode mode) {
  switch (mode) {
    case npu::v1::FLOAT_MODE_SATURATION: return "saturation";
    case npu::v1::FLOAT_MODE_INF_NAN: return "inf_nan";
    default: return "the preset's";
  }
}

}  // namespace npu::client::cli
