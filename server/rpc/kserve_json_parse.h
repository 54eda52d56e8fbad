// Client JSON (KServe REST bodies) parsed with its nesting and size bounded
// before nlohmann::json builds anything. nlohmann's parser keeps its own
// stack, but copying, comparing, serialising and destroying a json value
// recurse per level, so "[[[[..." 100,000 deep would overflow a thread's
// stack in whatever touched it next; and every value costs 16 bytes or more
// in the tree, so a body of "0,0,0,..." would take eight times its size.
// A linear scan in front of the parser refuses both.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::rpc {

struct JsonLimits {
  // Arrays and objects inside one another: a rank-8 tensor's "data" in an
  // inference request is 11 deep.
  int max_depth = 32;
  // Values (scalars, arrays, objects) in the whole text: a tensor larger than
  // this travels as binary data.
  uint64_t max_values = uint64_t{1} << 24;
};

// The scan alone: OK, or INVALID_ARGUMENT naming the limit and the byte
// offset where `text` passed it. Text that is not JSON passes; the parser
// says what is wrong with it.
absl::Status CheckJsonBounds(absl::string_view text, const JsonLimits& limits = {});

// CheckJsonBounds, then nlohmann's parser. Errors start with "the request
// body is not valid JSON: " or name the limit.
absl::StatusOr<nlohmann::json> ParseClientJson(absl::string_view text, const JsonLimits& limits = {});

// At most about 40 characters of `v`'s JSON, for error messages: written
// until the budget is spent, never by serialising the whole value.
std::string JsonExcerpt(const nlohmann::json& v);

}  // namespace npu::rpc
