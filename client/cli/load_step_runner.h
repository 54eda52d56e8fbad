// Runs one step of `npu load` (one concurrency level): the callers, the
// warm-up, the measurement windows and the stability check (load_command.h
// says what each means). Threads live here; the arithmetic is in
// load_measurement.h.
#pragma once

#include <ostream>

#include "client/cli/load_command.h"

namespace npu::client::cli {

// `progress_out` gets a live line when args.progress is set.
LoadStep RunLoadStep(Client& client, const npu::v1::RunRequest& request, const LoadCommandArgs& args,
                     int concurrency, std::ostream& progress_out);

}  // namespace npu::client::cli
