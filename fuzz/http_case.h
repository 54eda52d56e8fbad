// The HTTP/1.1 request reader and content decoding (server/http) under
// hostile byte streams, for fuzz/http_fuzzer.cc and the seeded CI run. A
// stream is either the fuzzer's raw bytes or generated: one to four requests
// built from valid and hostile pieces (request lines, conflicting and
// malformed Content-Lengths, Transfer-Encoding lists, obs-folds, control
// characters, too many or too long fields, chunked bodies with bad sizes,
// extensions and trailers, gzip bodies and bombs, Expect). The oracle:
//   - the reader gives the same requests and the same end whatever the
//     stream's split into reads (its state carries over exactly);
//   - no body passes the body limit, before or after content decoding;
//   - every refusal is a status the reader documents; nothing follows one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "fuzz/choice_source.h"

namespace npu::fuzz {

struct HttpStream {
  std::string bytes;
  std::vector<size_t> splits;  // read sizes for the second pass (cycled)
};

HttpStream GenerateHttpStream(ChoiceSource& src);

// "" or what the oracle found.
std::string CheckHttpStream(const HttpStream& stream);

}  // namespace npu::fuzz
