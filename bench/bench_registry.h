// Subcommands of npu-bench register themselves here, so adding a benchmark is
// adding one file.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace npu::bench {

using BenchMain = std::function<int(int argc, char** argv)>;

std::map<std::string, BenchMain>& BenchRegistry();

struct BenchRegistration {
  BenchRegistration(const std::string& name, BenchMain fn) { BenchRegistry()[name] = std::move(fn); }
};

}  // namespace npu::bench

#define NPU_BENCH(name, fn) static ::npu::bench::BenchRegistration npu_bench_registration_##fn(name, fn)
