// npu-bench SUBCOMMAND [ARGS]: runs one benchmark family, printing JSON lines.
#include <cstdio>
#include <cstring>

#include "bench/bench_registry.h"

int main(int argc, char** argv) {
  auto& registry = npu::bench::BenchRegistry();
  if (argc < 2 || registry.find(argv[1]) == registry.end()) {
    std::fprintf(stderr, "usage: npu-bench SUBCOMMAND [ARGS]\nsubcommands:");
    for (const auto& [name, fn] : registry) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return argc < 2 || std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  return registry[argv[1]](argc - 1, argv + 1);
}
