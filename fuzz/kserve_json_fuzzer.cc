// libFuzzer target: KServe REST inference bodies (fuzz/kserve_json_case.h).
// An even first byte: the rest is the body as it is (JSON and binary data;
// the next two bytes say where the JSON ends, or that no header says so); an
// odd one: the generator's choices, for deep structure. Build and run:
// scripts/fuzz.sh SECONDS BUILD kserve_json.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/choice_source.h"
#include "fuzz/kserve_json_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  npu::fuzz::KserveBody body;
  if (data[0] % 2 == 0) {
    const size_t header = static_cast<size_t>(data[1]) << 8 | data[2];
    body.body.assign(reinterpret_cast<const char*>(data + 3), size - 3);
    if (header != 0xFFFF) body.header_length = header;
  } else {
    npu::fuzz::BytesSource src(data + 1, size - 1);
    body = npu::fuzz::GenerateKserveBody(src);
  }
  const std::string finding = npu::fuzz::CheckKserveBody(body);
  if (finding.empty()) return 0;
  std::fprintf(stderr, "FINDING: %s\n", finding.c_str());
  std::abort();
}
