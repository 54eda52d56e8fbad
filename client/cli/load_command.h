// `npu load GRAPH.json [--input NAME=FILE.npy ...] --concurrency 1,4,16,64
//  [--rate R] [--requests N] [--duration S] [--warmup N] [--format table|json|csv]`
//
// A load generator in the spirit of Triton's perf_analyzer: registers the graph
// once, then runs it by id from C concurrent callers per step (closed loop), or
// at a fixed request rate (open loop: latency counts from when each request was
// due, so a slow server cannot hide its queueing). Inputs not given are random.
// Every step is bounded by a request count AND a duration: it never runs unbounded.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/client.h"

namespace npu::client::cli {

struct LoadCommandArgs {
  std::string graph_path;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"; missing inputs are random
  std::vector<int> concurrency = {1};
  double rate = 0;                  // requests/s per step; 0 = closed loop
  int64_t requests = 1000;          // measured requests per step, at most
  double duration_s = 30;           // seconds per step, at most
  int64_t warmup = 10;              // requests per step before measuring
  std::string format = "table";     // table | json | csv
  std::string device = "npu:0";
  uint64_t seed = 1;                // for the random inputs
  bool progress = false;            // live progress line on `progress_out`
  // Send the graph with every run instead of registering it once. Always done
  // when the target names several servers (ids are per replica).
  bool inline_graph = false;
};

// Whether runs carry the graph inline (see LoadCommandArgs::inline_graph).
bool SendsGraphInline(const Client& client, const LoadCommandArgs& args);

struct LoadStep {
  int concurrency = 0;
  double rate = 0;                  // asked-for rate; 0 = closed loop
  int64_t ok = 0;
  std::map<std::string, int64_t> errors;  // by status code name
  double elapsed_s = 0;
  double throughput = 0;            // successful requests per second
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
};

// Parses "1,4,16,64"; every level must be 1..4096.
absl::StatusOr<std::vector<int>> ParseConcurrencyList(const std::string& text);

// Builds the run request: registers the graph, fills missing inputs with
// random values of the declared dtype and shape. Usage errors for bad files.
absl::StatusOr<npu::v1::RunRequest> PrepareLoadRequest(Client& client, const LoadCommandArgs& args);

// Runs every step of the sweep.
absl::StatusOr<std::vector<LoadStep>> RunLoad(Client& client, const npu::v1::RunRequest& request,
                                              const LoadCommandArgs& args, std::ostream& progress_out);

absl::Status PrintLoadReport(const std::vector<LoadStep>& steps, const std::string& format, std::ostream& out);

absl::Status RunLoadCommand(Client& client, const LoadCommandArgs& args, std::ostream& out,
                            std::ostream& progress_out);

}  // namespace npu::client::cli
