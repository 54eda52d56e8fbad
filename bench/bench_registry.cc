#include "bench/bench_registry.h"

namespace npu::bench {

std::map<std::string, BenchMain>& BenchRegistry() {
  static auto* registry = new std::map<std::string, BenchMain>();
  return *registry;
}

}  // namespace npu::bench
