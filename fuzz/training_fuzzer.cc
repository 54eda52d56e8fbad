// libFuzzer target: TrainingService requests against an npu-server in the
// process (fuzz/training_case.h); the input bytes are the generator's
// choices. Build and run: scripts/fuzz.sh SECONDS BUILD training.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/choice_source.h"
#include "fuzz/training_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::BytesSource src(data, size);
  const std::string finding = npu::fuzz::RunTrainingCase(src);
  if (finding.empty()) return 0;
  std::fprintf(stderr, "FINDING: %s\n", finding.c_str());
  std::abort();
}
