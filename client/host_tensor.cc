#include "client/host_tensor.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/fp16.h"

namespace npu::client {
namespace {

// Tensor bytes are little-endian; so is every host this runs on.
template <typename T>
void AppendAsFloats(const std::string& data, std::vector<float>& out) {
  const size_t n = data.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T value;
    std::memcpy(&value, data.data() + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<float>(value));
  }
}

}  // namespace

size_t DataTypeSize(DataType dtype) {
  switch (dtype) {
    case npu::v1::FLOAT16: return 2;
    case npu::v1::FLOAT32: return 4;
    case npu::v1::INT32: return 4;
    case npu::v1::INT8: return 1;
    case npu::v1::BOOL: return 1;
    case npu::v1::INT64: return 8;
    default: return 0;
  }
}

absl::string_view DataTypeName(DataType dtype) {
  switch (dtype) {
    case npu::v1::FLOAT16: return "float16";
    case npu::v1::FLOAT32: return "float32";
    case npu::v1::INT32: return "int32";
    case npu::v1::INT8: return "int8";
    case npu::v1::BOOL: return "bool";
    case npu::v1::INT64: return "int64";
    default: return "unspecified";
  }
}

absl::StatusOr<int64_t> ElementCount(absl::Span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ShapeString(shape), " has a negative dimension"));
    }
    if (dim != 0 && count > INT64_MAX / dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ShapeString(shape), " has too many elements"));
    }
    count *= dim;
  }
  return count;
}

absl::StatusOr<int64_t> ElementCount(const npu::v1::Tensor& tensor) {
  return ElementCount(absl::MakeConstSpan(tensor.shape().data(), tensor.shape().size()));
}

absl::Status CheckTensorBytes(const npu::v1::Tensor& tensor) {
  const size_t element_size = DataTypeSize(tensor.dtype());
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor has no supported dtype (", static_cast<int>(tensor.dtype()), ")"));
  }
  absl::StatusOr<int64_t> count = ElementCount(tensor);
  if (!count.ok()) return count.status();
  if (static_cast<uint64_t>(*count) > UINT64_MAX / element_size ||
      static_cast<uint64_t>(*count) * element_size != tensor.data().size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor ", DataTypeName(tensor.dtype()),
        ShapeString(absl::MakeConstSpan(tensor.shape().data(), tensor.shape().size())), " needs ",
        *count, " x ", element_size, " bytes, has ", tensor.data().size()));
  }
  return absl::OkStatus();
}

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<npu::v1::Tensor> MakeFloatTensor(DataType dtype, std::vector<int64_t> shape,
                                                absl::Span<const float> values) {
  if (dtype != npu::v1::FLOAT32 && dtype != npu::v1::FLOAT16) {
    return absl::InvalidArgumentError(
        absl::StrCat("MakeFloatTensor makes float16 or float32, not ", DataTypeName(dtype)));
  }
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  if (static_cast<uint64_t>(*count) != values.size()) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeString(shape), " holds ",
                                                   *count, " elements, got ", values.size(),
                                                   " values"));
  }
  npu::v1::Tensor tensor;
  tensor.set_dtype(dtype);
  tensor.mutable_shape()->Add(shape.begin(), shape.end());
  std::string* data = tensor.mutable_data();
  data->resize(values.size() * DataTypeSize(dtype));
  if (dtype == npu::v1::FLOAT32) {
    std::memcpy(data->data(), values.data(), data->size());
  } else {
    std::vector<kernels::half_bits> halves(values.size());
    kernels::FloatToHalfN(values.data(), halves.data(), values.size(), /*saturate=*/false);
    std::memcpy(data->data(), halves.data(), data->size());
  }
  return tensor;
}

absl::StatusOr<std::vector<float>> TensorToFloats(const npu::v1::Tensor& tensor) {
  if (absl::Status status = CheckTensorBytes(tensor); !status.ok()) return status;
  const std::string& data = tensor.data();
  std::vector<float> out;
  out.reserve(data.size() / DataTypeSize(tensor.dtype()));
  switch (tensor.dtype()) {
    case npu::v1::FLOAT16: {
      std::vector<kernels::half_bits> halves(data.size() / 2);
      std::memcpy(halves.data(), data.data(), data.size());
      out.resize(halves.size());
      kernels::HalfToFloatN(halves.data(), out.data(), halves.size());
      break;
    }
    case npu::v1::FLOAT32: AppendAsFloats<float>(data, out); break;
    case npu::v1::INT32: AppendAsFloats<int32_t>(data, out); break;
    case npu::v1::INT8: AppendAsFloats<int8_t>(data, out); break;
    case npu::v1::BOOL: AppendAsFloats<uint8_t>(data, out); break;
    case npu::v1::INT64: AppendAsFloats<int64_t>(data, out); break;
    default: break;  // CheckTensorBytes refused it
  }
  return out;
}

}  // namespace npu::client
