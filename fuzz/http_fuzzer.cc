// libFuzzer target: the HTTP/1.1 request reader and content decoding
// (fuzz/http_case.h). An input whose first byte is even is the stream itself
// (split into reads by its next bytes), an odd one the generator's choices,
// so both raw framing bugs and deep structure are reached. Build and run:
// scripts/fuzz.sh SECONDS BUILD http.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/choice_source.h"
#include "fuzz/http_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  npu::fuzz::HttpStream stream;
  if (data[0] % 2 == 0) {
    const size_t splits = size > 4 ? 4 : size - 1;
    for (size_t i = 1; i <= splits; ++i) stream.splits.push_back(1 + data[i] % 64);
    stream.bytes.assign(reinterpret_cast<const char*>(data + 1 + splits), size - 1 - splits);
  } else {
    npu::fuzz::BytesSource src(data + 1, size - 1);
    stream = npu::fuzz::GenerateHttpStream(src);
  }
  const std::string finding = npu::fuzz::CheckHttpStream(stream);
  if (finding.empty()) return 0;
  std::fprintf(stderr, "FINDING: %s\n", finding.c_str());
  std::abort();
}
