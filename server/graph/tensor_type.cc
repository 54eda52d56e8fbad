#include "server/graph/tensor_type.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/shape_math.h"

namespace npu::graph {

size_t ElementSize(DataType t) {
  switch (t) {
    case v1::FLOAT16: return 2;
    case v1::FLOAT32: return 4;
    case v1::INT32: return 4;
    case v1::INT8: return 1;
    case v1::BOOL: return 1;
    case v1::INT64: return 8;
    default: return 0;
  }
}

std::string DataTypeName(DataType t) {
  if (v1::DataType_IsValid(t)) return v1::DataType_Name(t);
  return absl::StrCat("DataType(", static_cast<int>(t), ")");
}

bool IsFloat(DataType t) { return t == v1::FLOAT16 || t == v1::FLOAT32; }

int64_t TensorType::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& s) {
  // Shapes from values (a Reshape target) can be long; a message shows the start.
  constexpr size_t kShown = 2 * kMaxRank;
  if (s.size() <= kShown) return absl::StrCat("[", absl::StrJoin(s, ","), "]");
  return absl::StrCat("[", absl::StrJoin(s.begin(), s.begin() + kShown, ","), ",... (", s.size(), " dims)]");
}

std::string ToString(const TensorType& t) { return absl::StrCat(DataTypeName(t.dtype), ShapeToString(t.shape)); }

absl::StatusOr<TensorType> ValidateType(DataType dtype, const google::protobuf::RepeatedField<int64_t>& shape,
                                        const std::string& what) {
  if (ElementSize(dtype) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype ", DataTypeName(dtype)));
  }
  if (shape.size() > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rank ", shape.size(), " exceeds the maximum of ", kMaxRank));
  }
  TensorType t{dtype, Shape(shape.begin(), shape.end())};
  if (auto n = CheckedElements(t.shape, what); !n.ok()) return n.status();
  return t;
}

absl::Status CheckBoolBytes(const TensorType& t, const void* data, const std::string& what) {
  if (t.dtype != v1::BOOL) return absl::OkStatus();
  const auto* bytes = static_cast<const uint8_t*>(data);
  const int64_t n = t.elements();
  uint8_t any = 0;  // branch-free scan first; find the culprit only when there is one
  for (int64_t i = 0; i < n; ++i) any |= bytes[i];
  if ((any & 0xFE) == 0) return absl::OkStatus();
  for (int64_t i = 0; i < n; ++i) {
    if (bytes[i] > 1) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": BOOL element ", i, " is ", static_cast<int>(bytes[i]),
                                                     "; BOOL bytes are 0 or 1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npu::graph
