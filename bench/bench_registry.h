// Subcommands of npu-bench register themselves here, so adding a benchmark is
// adding one file. Each declares its options on a CLI11 subcommand, so a bad
// number or an unknown option is refused before anything runs.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace npu::bench {

// Declares the subcommand's options on `command`, bound to state that the
// returned function reads when it runs, after a successful parse. The function
// returns the process's exit code.
using BenchSetup = std::function<std::function<int()>(CLI::App& command)>;

struct BenchCommand {
  std::string description;
  BenchSetup setup;
};

std::map<std::string, BenchCommand>& BenchRegistry();

struct BenchRegistration {
  BenchRegistration(const std::string& name, std::string description, BenchSetup setup) {
    BenchRegistry()[name] = {std::move(description), std::move(setup)};
  }
};

}  // namespace npu::bench

#define NPU_BENCH(name, description, setup) \
  static ::npu::bench::BenchRegistration npu_bench_registration_##setup(name, description, setup)
