// A model's config.pbtxt (server/core/model_config.h) under generated hostile
// protobuf text, for fuzz/model_config_fuzzer.cc and the seeded CI run:
// Triton's fields (served or not) and unknown ones, nested right, wrong or past
// the nesting bound (up to tens of thousands of levels), values at and past
// every type's range, enums by name and number, lists, comments, strings with
// escapes and bytes that are not UTF-8, repeated singular fields, texts past
// the size bound, then cut or with bytes flipped. The oracle: the parser
// answers OK or INVALID_ARGUMENT naming the file, with a message under 4 KiB;
// never crashes or recurses without bound; an accepted config keeps the rules
// the batcher relies on (max_batch_size >= 0, preferred sizes within it,
// default priority within the levels, versions served a subset in order).
#pragma once

#include <string>

#include "fuzz/choice_source.h"

namespace npu::fuzz {

std::string GenerateModelConfigText(ChoiceSource& src);

// "" or what the oracle found.
std::string CheckModelConfigText(const std::string& text);

}  // namespace npu::fuzz
