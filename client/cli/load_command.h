// `npu load GRAPH.json|MODEL.onnx|--model NAME [--input NAME=FILE.npy ...]
//    [--concurrency 1,4,16 | --concurrency-range START:END:STEP] [--rate R]
//    [--requests N] [--warmup N] [--stability-percentage P [--max-windows W]]
//    [--duration S] [--format table|json|csv]`
//
// A load generator in the spirit of Triton's perf_analyzer. The graph is
// registered once and run by id; inputs not given are random. Each step (one
// concurrency level) runs C callers back to back (closed loop), or sends at a
// fixed rate (open loop: latency counts from when each request was due, so a
// slow server cannot hide its queueing). After --warmup unmeasured requests,
// a measurement window is the next --requests requests: its throughput counts
// from the first of them sent to the last of them answered. With
// --stability-percentage, windows follow one another until the last three
// agree within P% in throughput and mean latency (or --max-windows); the row
// then covers those three. Each row also has the mean executed batch size the
// responses reported (a model with dynamic batching shares runs; the table's
// notes give the sizes seen). The callers keep sending until the last measured
// request is answered, so the server stays loaded to the end. Every step is
// bounded by its windows and by --duration.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cli/load_measurement.h"
#include "client/client.h"

namespace npu::client::cli {

struct LoadCommandArgs {
  std::string graph_path;
  // Or a model the server serves by name (Run's `model`): nothing is
  // registered, and every input comes from `inputs`.
  std::string model, model_version;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"; missing inputs are random
  std::vector<int> concurrency = {1};
  double rate = 0;                  // requests/s per step; 0 = closed loop
  int64_t requests = 1000;          // measured requests per window
  int64_t warmup = 20;              // unmeasured requests per step before the first window
  double stability_percentage = 0;  // 0 = one window per step
  int max_windows = 10;             // with stability: windows per step, at most
  double duration_s = 60;           // seconds per step, at most
  bool server_profile = true;       // ask for the profile: server compute and device queue per row
  std::string format = "table";     // table | json | csv
  std::string device = "npu:0";
  uint64_t seed = 1;                // for the random inputs
  bool progress = false;            // live progress line on `progress_out`
  // Send the graph with every run instead of registering it once. Always done
  // when the target names several servers (ids are per replica).
  bool inline_graph = false;
};

// Windows whose agreement makes a step stable.
inline constexpr int kStableWindows = 3;

// Whether runs carry the graph inline (see LoadCommandArgs::inline_graph).
bool SendsGraphInline(const Client& client, const LoadCommandArgs& args);

// Builds the run request: registers the graph, fills missing inputs with
// random values of the declared dtype and shape. Usage errors for bad files.
absl::StatusOr<npu::v1::RunRequest> PrepareLoadRequest(Client& client, const LoadCommandArgs& args);

// Runs every step of the sweep, calling `on_step` as each one ends. Usage
// errors for unbounded or malformed settings.
absl::StatusOr<std::vector<LoadStep>> RunLoad(Client& client, const npu::v1::RunRequest& request,
                                              const LoadCommandArgs& args, std::ostream& progress_out,
                                              const std::function<void(const LoadStep&)>& on_step = nullptr);

// The whole command: rows to `out` as steps finish, notes to `notes`.
absl::Status RunLoadCommand(Client& client, const LoadCommandArgs& args, std::ostream& out, std::ostream& notes);

}  // namespace npu::client::cli
