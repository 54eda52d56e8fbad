// KServe v2 REST inference bodies (server/rpc/kserve_http_infer.h) under
// generated hostile JSON, for fuzz/kserve_json_fuzzer.cc and the seeded CI
// run: requests with ids, parameters of every JSON kind and nesting, inputs
// with any datatype, shapes (huge, negative, non-integer, nested), data
// nested right, too deep or ragged, with numbers past every type's range,
// the binary extension with sizes that fit or not, outputs with parameters,
// then cut or with bytes flipped. The oracle: the decoder answers OK or
// INVALID_ARGUMENT / OUT_OF_RANGE with a message under 4 KiB, never crashes
// or recurses without bound, and every decoded tensor has its data.
#pragma once

#include <optional>
#include <string>

#include "fuzz/choice_source.h"

namespace npu::fuzz {

struct KserveBody {
  std::string body;
  std::optional<uint64_t> header_length;  // Inference-Header-Content-Length
};

KserveBody GenerateKserveBody(ChoiceSource& src);

// "" or what the oracle found.
std::string CheckKserveBody(const KserveBody& body);

}  // namespace npu::fuzz
