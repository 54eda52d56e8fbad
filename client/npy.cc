#include "client/npy.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "client/host_tensor.h"
#include "client/npy_header.h"

namespace npu::client {
namespace {

constexpr absl::string_view kMagic = "\x93NUMPY";
constexpr size_t kPreludeBytes = 8;  // magic + major + minor
constexpr size_t kAlignment = 64;
// NumPy itself refuses headers beyond this unless told otherwise; so do we,
// so a corrupt length cannot make us read gigabytes of "header".
constexpr uint32_t kMaxHeaderBytes = 1 << 20;

struct DtypeEntry {
  absl::string_view descr;
  npu::v1::DataType dtype;
};
constexpr std::array<DtypeEntry, 6> kDtypes = {{
    {"<f2", npu::v1::FLOAT16},
    {"<f4", npu::v1::FLOAT32},
    {"<i4", npu::v1::INT32},
    {"|i1", npu::v1::INT8},
    {"|b1", npu::v1::BOOL},
    {"<i8", npu::v1::INT64},
}};

absl::Status FileError(absl::string_view source, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

absl::StatusOr<npu::v1::DataType> DtypeFromDescr(absl::string_view descr, absl::string_view source) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.descr == descr) return entry.dtype;
  }
  // One-byte types have no byte order; accept the other spellings of them.
  if (descr == "<i1" || descr == ">i1" || descr == "=i1") return npu::v1::INT8;
  if (descr == "<b1" || descr == ">b1" || descr == "=b1") return npu::v1::BOOL;
  if (!descr.empty() && descr[0] == '>') {
    return FileError(source, absl::StrCat("big-endian dtype '", descr,
                                          "' is not supported; save it little-endian, e.g. "
                                          "a.astype(a.dtype.newbyteorder('<'))"));
  }
  return FileError(source, absl::StrCat("dtype '", descr,
                                        "' is not supported; use float16, float32, int32, "
                                        "int8, bool or int64 (e.g. a.astype(np.float32))"));
}

// Header text (after the length field) -> dtype and shape.
absl::StatusOr<npu::v1::Tensor> TensorFromHeader(absl::string_view header_text,
                                                 absl::string_view source) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeaderDict(header_text);
  if (!header.ok()) return FileError(source, header.status().message());
  if (header->fortran_order) {
    // A 0-d or 1-d array is the same in both orders, but NumPy only writes
    // True for arrays that are not C-contiguous, so refuse it plainly.
    return FileError(source,
                     "array is in Fortran order; save it C-ordered, e.g. np.ascontiguousarray(a)");
  }
  absl::StatusOr<npu::v1::DataType> dtype = DtypeFromDescr(header->descr, source);
  if (!dtype.ok()) return dtype.status();
  npu::v1::Tensor tensor;
  tensor.set_dtype(*dtype);
  tensor.mutable_shape()->Add(header->shape.begin(), header->shape.end());
  return tensor;
}

// Bytes the data must have, with a file-naming error on overflow.
absl::StatusOr<uint64_t> ExpectedDataBytes(const npu::v1::Tensor& tensor, absl::string_view source) {
  absl::StatusOr<int64_t> count = ElementCount(tensor);
  if (!count.ok()) return FileError(source, count.status().message());
  const uint64_t element_size = DataTypeSize(tensor.dtype());
  if (static_cast<uint64_t>(*count) > UINT64_MAX / element_size) {
    return FileError(source, "shape has too many elements");
  }
  return static_cast<uint64_t>(*count) * element_size;
}

absl::Status DataSizeError(const npu::v1::Tensor& tensor, uint64_t expected, uint64_t actual,
                           absl::string_view source) {
  return FileError(
      source, absl::StrCat("data is ", actual, " bytes but shape ",
                           ShapeString(absl::MakeConstSpan(tensor.shape().data(),
                                                           tensor.shape().size())),
                           " of ", DataTypeName(tensor.dtype()), " needs ", expected,
                           actual < expected ? " (file truncated?)" : " (trailing bytes)"));
}

// Prelude -> (header length field size). Validates magic and version.
absl::StatusOr<size_t> LengthFieldBytes(absl::string_view prelude, absl::string_view source) {
  if (prelude.size() < kPreludeBytes || prelude.substr(0, kMagic.size()) != kMagic) {
    return FileError(source, "not a .npy file (bad magic; expected \\x93NUMPY)");
  }
  const auto major = static_cast<unsigned char>(prelude[6]);
  const auto minor = static_cast<unsigned char>(prelude[7]);
  if (major == 1 && minor == 0) return 2;
  if ((major == 2 || major == 3) && minor == 0) return 4;
  return FileError(source, absl::StrCat(".npy format version ", major, ".", minor,
                                        " is not supported (1.0, 2.0, 3.0 are)"));
}

uint32_t ReadLittleEndian(absl::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

// Everything up to the data: prelude, length, padded header dict.
absl::StatusOr<std::string> EncodeHeader(const npu::v1::Tensor& tensor) {
  if (absl::Status status = CheckTensorBytes(tensor); !status.ok()) return status;
  NpyHeader header;
  header.descr = std::string(NpyDescr(tensor.dtype()));
  header.shape.assign(tensor.shape().begin(), tensor.shape().end());
  std::string dict = FormatNpyHeaderDict(header);

  size_t length_field = 2;
  size_t unpadded = kPreludeBytes + length_field + dict.size() + 1;  // + '\n'
  size_t padded = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  if (padded - kPreludeBytes - length_field > 0xffff) {
    length_field = 4;
    unpadded = kPreludeBytes + length_field + dict.size() + 1;
    padded = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  }
  const uint32_t header_length = static_cast<uint32_t>(padded - kPreludeBytes - length_field);

  std::string out(kMagic);
  out.push_back(length_field == 2 ? 1 : 2);
  out.push_back(0);
  for (size_t i = 0; i < length_field; ++i) out.push_back(static_cast<char>(header_length >> (8 * i)));
  out += dict;
  out.append(padded - unpadded, ' ');
  out.push_back('\n');
  return out;
}

}  // namespace

absl::string_view NpyDescr(npu::v1::DataType dtype) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.dtype == dtype) return entry.descr;
  }
  return "";
}

absl::StatusOr<npu::v1::Tensor> DecodeNpy(absl::string_view bytes, absl::string_view source) {
  absl::StatusOr<size_t> length_field = LengthFieldBytes(bytes, source);
  if (!length_field.ok()) return length_field.status();
  if (bytes.size() < kPreludeBytes + *length_field) {
    return FileError(source, "truncated header (no header length)");
  }
  const uint32_t header_length = ReadLittleEndian(bytes.substr(kPreludeBytes, *length_field));
  const size_t header_start = kPreludeBytes + *length_field;
  if (bytes.size() - header_start < header_length) {
    return FileError(source, absl::StrCat("truncated header: ", header_length, " bytes announced, ",
                                          bytes.size() - header_start, " present"));
  }
  absl::StatusOr<npu::v1::Tensor> tensor =
      TensorFromHeader(bytes.substr(header_start, header_length), source);
  if (!tensor.ok()) return tensor.status();

  absl::string_view data = bytes.substr(header_start + header_length);
  absl::StatusOr<uint64_t> expected = ExpectedDataBytes(*tensor, source);
  if (!expected.ok()) return expected.status();
  if (data.size() != *expected) return DataSizeError(*tensor, *expected, data.size(), source);
  tensor->set_data(data.data(), data.size());
  return tensor;
}

absl::StatusOr<npu::v1::Tensor> ReadNpy(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return FileError(path, "is a directory, not a .npy file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));

  // Read the header first, then the data straight into the tensor: a large
  // array is copied once, from the file.
  std::string prelude(kPreludeBytes, '\0');
  in.read(prelude.data(), kPreludeBytes);
  prelude.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<size_t> length_field = LengthFieldBytes(prelude, path);
  if (!length_field.ok()) return length_field.status();

  std::string length_bytes(*length_field, '\0');
  in.read(length_bytes.data(), *length_field);
  if (static_cast<size_t>(in.gcount()) != *length_field) {
    return FileError(path, "truncated header (no header length)");
  }
  const uint32_t header_length = ReadLittleEndian(length_bytes);
  if (header_length > kMaxHeaderBytes) {
    return FileError(path, absl::StrCat("header length ", header_length, " is implausibly large"));
  }
  std::string header_text(header_length, '\0');
  in.read(header_text.data(), header_length);
  if (static_cast<size_t>(in.gcount()) != header_length) {
    return FileError(path, absl::StrCat("truncated header: ", header_length, " bytes announced, ",
                                        in.gcount(), " present"));
  }
  absl::StatusOr<npu::v1::Tensor> tensor = TensorFromHeader(header_text, path);
  if (!tensor.ok()) return tensor.status();

  // Compare with the file's size before allocating, so a huge shape in a
  // small file is an error, not an allocation failure.
  const std::streamoff data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff file_end = in.tellg();
  in.seekg(data_start);
  if (data_start < 0 || file_end < data_start) return FileError(path, "cannot determine file size");
  const uint64_t actual = static_cast<uint64_t>(file_end - data_start);
  absl::StatusOr<uint64_t> expected = ExpectedDataBytes(*tensor, path);
  if (!expected.ok()) return expected.status();
  if (actual != *expected) return DataSizeError(*tensor, *expected, actual, path);

  std::string* data = tensor->mutable_data();
  data->resize(actual);
  in.read(data->data(), static_cast<std::streamsize>(actual));
  if (static_cast<uint64_t>(in.gcount()) != actual) return FileError(path, "read error in data");
  return tensor;
}

absl::StatusOr<std::string> EncodeNpy(const npu::v1::Tensor& tensor) {
  absl::StatusOr<std::string> out = EncodeHeader(tensor);
  if (!out.ok()) return out.status();
  out->append(tensor.data());
  return out;
}

absl::Status WriteNpy(const std::string& path, const npu::v1::Tensor& tensor) {
  absl::StatusOr<std::string> header = EncodeHeader(tensor);
  if (!header.ok()) {
    return absl::Status(header.status().code(),
                        absl::StrCat(path, ": cannot write: ", header.status().message()));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot create file"));
  // Header and data written separately: the data is not copied.
  out.write(header->data(), static_cast<std::streamsize>(header->size()));
  out.write(tensor.data().data(), static_cast<std::streamsize>(tensor.data().size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace npu::client
