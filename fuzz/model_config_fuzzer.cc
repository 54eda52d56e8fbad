// libFuzzer target: a model's config.pbtxt (fuzz/model_config_case.h). An
// input whose first byte is even is the text itself, an odd one the
// generator's choices. Build and run: scripts/fuzz.sh SECONDS BUILD model_config.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/choice_source.h"
#include "fuzz/model_config_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text;
  if (data[0] % 2 == 0) {
    text.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  } else {
    npu::fuzz::BytesSource src(data + 1, size - 1);
    text = npu::fuzz::GenerateModelConfigText(src);
  }
  const std::string finding = npu::fuzz::CheckModelConfigText(text);
  if (finding.empty()) return 0;
  std::fprintf(stderr, "FINDING: %s\n", finding.c_str());
  std::abort();
}
