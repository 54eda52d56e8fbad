#include "server/rpc/kserve_datatype.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::rpc {
namespace {

constexpr std::pair<const char*, v1::DataType> kServed[] = {
    {"FP16", v1::FLOAT16}, {"FP32", v1::FLOAT32}, {"INT32", v1::INT32},
    {"INT8", v1::INT8},    {"BOOL", v1::BOOL},    {"INT64", v1::INT64},
};
// Named by the protocol, not run by the simulated NPU.
constexpr const char* kUnserved[] = {"UINT8", "UINT16", "UINT32", "UINT64", "INT16", "FP64", "BF16", "BYTES"};
constexpr char kServedList[] = "FP16, FP32, INT32, INT8, BOOL, INT64";

}  // namespace

const char* KserveDataTypeName(v1::DataType dtype) {
  for (const auto& [name, type] : kServed) {
    if (type == dtype) return name;
  }
  return "UNSUPPORTED";
}

absl::StatusOr<v1::DataType> DataTypeFromKserve(absl::string_view name, absl::string_view what) {
  for (const auto& [served, type] : kServed) {
    if (name == served) return type;
  }
  for (const char* unserved : kUnserved) {
    if (name == unserved) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": datatype ", name, " is not supported by this server; it runs ", kServedList));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": unknown datatype ", graph::Quoted(name),
                                                 " (datatypes are upper case, e.g. FP32; served: ", kServedList, ")"));
}

}  // namespace npu::rpc
