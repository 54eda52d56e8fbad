// An op's code runs behind this: whatever it throws (std::bad_alloc from a
// huge scratch buffer, std::length_error, a bug) becomes a status naming the
// node, so one bad request fails alone and the server keeps serving.
#pragma once

#include <exception>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/node_error.h"

namespace npu::graph {

// Calls fn() -> absl::Status. `phase` says what was being done ("planning", "running").
template <typename Fn>
absl::Status GuardedCall(const v1::Node& node, const char* phase, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(NodeLabel(node), ": the host ran out of memory while ", phase, " it"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(NodeLabel(node), ": internal error while ", phase, " it: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(NodeLabel(node), ": unknown internal error while ", phase, " it"));
  }
}

}  // namespace npu::graph
