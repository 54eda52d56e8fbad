#include "bench/bench_registry.h"

namespace npu::bench {

std::map<std::string, BenchCommand>& BenchRegistry() {
  static auto* registry = new std::map<std::string, BenchCommand>();
  return *registry;
}

}  // namespace npu::bench
