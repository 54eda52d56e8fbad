// How the `npu` command line reports errors and picks its exit code.
//
// Errors found before talking to the server (bad arguments, unreadable files)
// are usage errors, exit 2; errors from the server or while writing results
// exit 1.
#pragma once

#include <ostream>

#include "absl/status/status.h"

namespace npu::client::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;
inline constexpr int kExitUsageError = 2;

// Tags the status (a payload) as a usage error; OK stays OK.
absl::Status UsageError(absl::Status status);
bool IsUsageError(const absl::Status& status);

// Prints "npu: error: message" for a usage error, "npu: error: CODE: message"
// for an error from the server or the system, and returns the exit code.
int ReportError(const absl::Status& status, std::ostream& err);

}  // namespace npu::client::cli
