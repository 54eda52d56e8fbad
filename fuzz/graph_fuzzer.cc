// libFuzzer target: structure-aware. The input bytes are the generator's
// choices (graph_generator.h), not protobuf framing, so every input is a graph
// of registered ops with declared attributes, hostile values and shapes, and a
// mutation changes a decision; the case goes through planning and two runs
// and the oracle in case_check.h. Build and run: scripts/fuzz.sh.
//
// A finding aborts (libFuzzer keeps the input as a crash artifact), unless
// NPU_FUZZ_FINDINGS names a folder: then the first input of each kind of
// finding is written there, its report beside it, and the run goes on (a long
// run reports everything it finds). Sanitizer reports always stop the run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "fuzz/case_check.h"
#include "fuzz/choice_source.h"
#include "fuzz/graph_generator.h"

namespace {

// What distinguishes one finding from another: its text without numbers and
// node names, so the same bug on other values counts once.
std::string KindOf(const std::string& finding) {
  std::string kind;
  for (size_t i = 0; i < finding.size() && kind.size() < 120; ++i) {
    const char c = finding[i];
    if (c >= '0' && c <= '9') continue;
    kind.push_back(c);
  }
  return kind;
}

void Record(const char* dir, const std::string& finding, const std::string& report, const uint8_t* data,
            size_t size) {
  static auto* seen = new std::set<std::string>();
  if (!seen->insert(KindOf(finding)).second) return;
  const std::string base = std::string(dir) + "/finding-" +
                           std::to_string(std::hash<std::string>{}(std::string(reinterpret_cast<const char*>(data), size)));
  std::ofstream(base, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  std::ofstream(base + ".txt") << finding << "\n" << report;
  std::fprintf(stderr, "FINDING (%s): %s\n", base.c_str(), finding.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const npu::fuzz::GeneratorLimits limits;
  static auto* checker = new npu::fuzz::CaseChecker();
  static const char* findings_dir = std::getenv("NPU_FUZZ_FINDINGS");
  npu::fuzz::BytesSource src(data, size);
  const npu::fuzz::FuzzCase c = npu::fuzz::GenerateCase(src, limits);
  const npu::fuzz::CaseOutcome outcome = checker->Check(c, limits);
  if (outcome.finding.empty()) return 0;
  if (findings_dir != nullptr) {
    Record(findings_dir, outcome.finding, npu::fuzz::DescribeCase(c), data, size);
    return 0;
  }
  std::fprintf(stderr, "FINDING: %s\n%s\n", outcome.finding.c_str(), npu::fuzz::DescribeCase(c).c_str());
  std::abort();
}
