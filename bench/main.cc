// npu-bench SUBCOMMAND [OPTIONS]: runs one benchmark family, printing JSON lines.
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/bench_registry.h"
#include "version/version.h"

int main(int argc, char** argv) {
  CLI::App app{"npu-bench: npuserve's benchmarks, each against an anchor measured in the same run; "
               "every output line is one JSON object",
               "npu-bench"};
  app.set_version_flag("--version", npu::VersionLine("npu-bench"), "print the version and exit");
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> runs;
  for (auto& [name, command] : npu::bench::BenchRegistry()) {
    runs[name] = command.setup(*app.add_subcommand(name, command.description));
  }
  if (argc < 2) {
    std::cerr << app.help();
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "npu-bench: error: " << e.what() << "\nrun 'npu-bench --help' for usage\n";
    return 2;
  }
  for (auto& [name, run] : runs) {
    if (app.got_subcommand(name)) return run();
  }
  return 2;  // unreachable: require_subcommand(1)
}
