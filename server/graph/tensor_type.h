// Element types and shapes as the graph layer sees them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/tensor.pb.h"

namespace npu::graph {

using DataType = ::npu::v1::DataType;
using Shape = std::vector<int64_t>;

// Bytes per element; 0 for DATA_TYPE_UNSPECIFIED or unknown values.
size_t ElementSize(DataType t);
// "FLOAT16", "FLOAT32", ...
std::string DataTypeName(DataType t);
bool IsFloat(DataType t);

struct TensorType {
  DataType dtype = ::npu::v1::DATA_TYPE_UNSPECIFIED;
  Shape shape;

  int64_t elements() const;  // callers validate the shape first (ValidateShape)
  uint64_t bytes() const { return static_cast<uint64_t>(elements()) * ElementSize(dtype); }
  bool operator==(const TensorType&) const = default;
};

// "FLOAT16[4,8]"; a shape of more than 2 * kMaxRank dims shows only its first ones.
std::string ToString(const TensorType& t);
std::string ShapeToString(const Shape& s);

// Limits a tensor must respect; the rpc layer sets them from flags.
inline constexpr int kMaxRank = 8;
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// Checks a dtype and shape from the wire: known dtype, rank <= kMaxRank, dims
// >= 0 and the element count within kMaxElements (CheckedElements).
// `what` names the culprit in the message ("input \"x\"").
absl::StatusOr<TensorType> ValidateType(DataType dtype, const google::protobuf::RepeatedField<int64_t>& shape,
                                        const std::string& what);

// BOOL tensors hold one byte per element, 0 or 1 (the wire's promise, which
// Equal and Where rely on): INVALID_ARGUMENT naming the first other byte.
// OK for every other dtype. `data` holds t.bytes() bytes.
absl::Status CheckBoolBytes(const TensorType& t, const void* data, const std::string& what);

}  // namespace npu::graph
