// .npy I/O checked against NumPy itself: NumPy writes, we read; we write,
// NumPy reads. Malformed files each give an error naming the file and fault.
#include "client/npy.h"

#include <string>
#include <vector>

#include "client/host_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace npu::client {
namespace {

using ::testing::HasSubstr;
using testing::PythonResult;
using testing::ReadFileBytes;
using testing::RunPython;
using testing::ScratchDir;
using testing::WriteFileBytes;

struct DtypeCase {
  const char* numpy_expr;  // an array expression
  npu::v1::DataType dtype;
  std::vector<int64_t> shape;
};

class NpyFromNumpyTest : public ::testing::TestWithParam<DtypeCase> {};

// NumPy saves the array and, separately, its raw bytes; our reader must
// agree on dtype, shape and every byte.
TEST_P(NpyFromNumpyTest, ReadsWhatNumpyWrites) {
  const DtypeCase& c = GetParam();
  ScratchDir dir;
  const std::string npy = dir.File("a.npy"), raw = dir.File("a.bin");
  PythonResult result = RunPython(
      dir, std::string("a = ") + c.numpy_expr + "\nnp.save('" + npy + "', a)\nopen('" + raw +
               "', 'wb').write(np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<')).tobytes())");
  ASSERT_EQ(result.exit_code, 0) << result.output;

  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(npy);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), c.dtype);
  EXPECT_THAT(std::vector<int64_t>(tensor->shape().begin(), tensor->shape().end()),
              ::testing::ElementsAreArray(c.shape));
  EXPECT_EQ(tensor->data(), ReadFileBytes(raw));
  EXPECT_TRUE(CheckTensorBytes(*tensor).ok());
}

// We write the tensor; NumPy loads it and must see the same dtype, shape and
// bytes as the array it started from.
TEST_P(NpyFromNumpyTest, NumpyReadsWhatWeWrite) {
  const DtypeCase& c = GetParam();
  ScratchDir dir;
  const std::string source = dir.File("source.npy"), ours = dir.File("ours.npy");
  ASSERT_EQ(RunPython(dir, std::string("np.save('") + source + "', " + c.numpy_expr + ")").exit_code,
            0);
  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(source);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  ASSERT_TRUE(WriteNpy(ours, *tensor).ok());

  const std::string bytes = ReadFileBytes(ours);
  // Data starts 64-byte aligned, as NumPy aligns it.
  const size_t data_start = bytes.size() - tensor->data().size();
  EXPECT_EQ(data_start % 64, 0u);

  PythonResult result = RunPython(
      dir, std::string("a = ") + c.numpy_expr + "\nb = np.load('" + ours +
               "')\nassert a.dtype == b.dtype, (a.dtype, b.dtype)\nassert a.shape == b.shape, "
               "(a.shape, b.shape)\nassert a.tobytes() == b.tobytes()\nprint('same', b.dtype, "
               "b.shape)");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("same"));
}

INSTANTIATE_TEST_SUITE_P(
    AllDtypes, NpyFromNumpyTest,
    ::testing::Values(
        DtypeCase{"np.arange(6, dtype=np.float16).reshape(2, 3) - 2.5", npu::v1::FLOAT16, {2, 3}},
        DtypeCase{"np.array([1.5, -0.0, np.inf, np.nan, 65504, 6e-8], dtype=np.float16)",
                  npu::v1::FLOAT16, {6}},
        DtypeCase{"np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)", npu::v1::FLOAT32,
                  {2, 3, 4}},
        DtypeCase{"np.array([[-2147483648, 2147483647], [0, -1]], dtype=np.int32)", npu::v1::INT32,
                  {2, 2}},
        DtypeCase{"np.array([-128, 127, 0, -1, 5], dtype=np.int8)", npu::v1::INT8, {5}},
        DtypeCase{"np.array([[True, False, True]])", npu::v1::BOOL, {1, 3}},
        DtypeCase{"np.array([-(2**63), 2**63 - 1, 3], dtype=np.int64)", npu::v1::INT64, {3}},
        DtypeCase{"np.float32(3.25)", npu::v1::FLOAT32, {}},
        DtypeCase{"np.array(7, dtype=np.int32)", npu::v1::INT32, {}},
        DtypeCase{"np.zeros((0, 3), dtype=np.float16)", npu::v1::FLOAT16, {0, 3}},
        DtypeCase{"np.ones((1, 1, 1, 1, 2), dtype=np.float32)", npu::v1::FLOAT32,
                  {1, 1, 1, 1, 2}}));

// NumPy writes 2.0 and 3.0 when asked; both differ only in the length field.
TEST(NpyTest, ReadsFormatVersions2And3) {
  ScratchDir dir;
  for (const char* version : {"(1, 0)", "(2, 0)", "(3, 0)"}) {
    const std::string path = dir.File("v.npy");
    PythonResult result = RunPython(
        dir, std::string("from numpy.lib import format\nwith open('") + path +
                 "', 'wb') as f:\n  format.write_array(f, np.arange(12, dtype=np.int32).reshape(3, "
                 "4), version=" + version + ")");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(path);
    ASSERT_TRUE(tensor.ok()) << version << ": " << tensor.status();
    EXPECT_EQ(tensor->dtype(), npu::v1::INT32);
    ASSERT_EQ(tensor->shape_size(), 2);
    EXPECT_EQ(tensor->shape(0), 3);
    EXPECT_EQ(tensor->shape(1), 4);
    absl::StatusOr<std::vector<float>> values = TensorToFloats(*tensor);
    ASSERT_TRUE(values.ok());
    EXPECT_EQ((*values)[11], 11.0f);
  }
}

// Values NumPy prints for a file we wrote from floats.
TEST(NpyTest, NumpyPrintsOurFloat16Values) {
  ScratchDir dir;
  const std::string path = dir.File("h.npy");
  absl::StatusOr<npu::v1::Tensor> tensor =
      MakeFloatTensor(npu::v1::FLOAT16, {2, 2}, std::vector<float>{0.5f, -1.0f, 1.0f / 3, 70000.0f});
  ASSERT_TRUE(tensor.ok());
  ASSERT_TRUE(WriteNpy(path, *tensor).ok());
  PythonResult result = RunPython(
      dir, "a = np.load('" + path + "')\nprint(a.dtype, a.shape, a.flatten().tolist())");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "float16 (2, 2) [0.5, -1.0, 0.333251953125, inf]\n");
}

TEST(NpyTest, EncodeDecodeRoundTrip) {
  npu::v1::Tensor tensor;
  tensor.set_dtype(npu::v1::INT64);
  tensor.add_shape(2);
  tensor.set_data(std::string(16, '\x01'));
  absl::StatusOr<std::string> bytes = EncodeNpy(tensor);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<npu::v1::Tensor> back = DecodeNpy(*bytes, "memory");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), tensor.SerializeAsString());
}

TEST(NpyTest, RefusesToWriteInconsistentTensor) {
  ScratchDir dir;
  npu::v1::Tensor tensor;
  tensor.set_dtype(npu::v1::FLOAT32);
  tensor.add_shape(3);
  tensor.set_data(std::string(8, '\0'));
  absl::Status status = WriteNpy(dir.File("bad.npy"), tensor);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("bad.npy"));
}

// ---- malformed files --------------------------------------------------------

// A valid little file to damage: float32 [2, 3].
std::string ValidNpy() {
  npu::v1::Tensor tensor;
  tensor.set_dtype(npu::v1::FLOAT32);
  tensor.add_shape(2);
  tensor.add_shape(3);
  tensor.set_data(std::string(24, '\0'));
  return *EncodeNpy(tensor);
}

// The v1.0 file with `dict` as its header (padded as NumPy would not need to).
std::string NpyWithHeader(const std::string& dict, const std::string& data) {
  std::string header = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + data;
}

struct MalformedCase {
  const char* label;
  std::string bytes;
  const char* expected;  // in the message
};

class NpyMalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(NpyMalformedTest, ClearErrorNamingFile) {
  const MalformedCase& c = GetParam();
  ScratchDir dir;
  const std::string path = dir.File(std::string(c.label) + ".npy");
  WriteFileBytes(path, c.bytes);
  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(path);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument) << tensor.status();
  EXPECT_THAT(std::string(tensor.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(tensor.status().message()), HasSubstr(c.expected));

  // The in-memory decoder agrees.
  absl::StatusOr<npu::v1::Tensor> decoded = DecodeNpy(c.bytes, "mem");
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(std::string(decoded.status().message()), HasSubstr(c.expected));
}

INSTANTIATE_TEST_SUITE_P(
    Files, NpyMalformedTest,
    ::testing::Values(
        MalformedCase{"empty", "", "bad magic"},
        MalformedCase{"bad_magic", "\x93NUMPX\x01\x00\x10\x00{}", "bad magic"},
        MalformedCase{"text_file", "hello, this is not numpy\n", "bad magic"},
        MalformedCase{"version_9", std::string("\x93NUMPY\x09\x00\x10\x00", 10), "version 9.0"},
        MalformedCase{"no_length", std::string("\x93NUMPY\x01\x00", 8), "truncated header"},
        MalformedCase{"truncated_header", ValidNpy().substr(0, 30), "truncated header"},
        MalformedCase{"fortran_order",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                    std::string(24, '\0')),
                      "Fortran order"},
        MalformedCase{"float64",
                      NpyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                    std::string(16, '\0')),
                      "dtype '<f8' is not supported"},
        MalformedCase{"uint8",
                      NpyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                                    std::string(2, '\0')),
                      "dtype '|u1' is not supported"},
        MalformedCase{"big_endian",
                      NpyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                    std::string(8, '\0')),
                      "big-endian"},
        MalformedCase{"structured",
                      NpyWithHeader("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': "
                                    "(2,), }",
                                    std::string(8, '\0')),
                      "structured dtypes"},
        MalformedCase{"data_short", ValidNpy().substr(0, ValidNpy().size() - 5),
                      "data is 19 bytes but shape [2, 3] of float32 needs 24"},
        MalformedCase{"data_long", ValidNpy() + "xyz", "trailing bytes"},
        MalformedCase{"not_a_dict", NpyWithHeader("[1, 2, 3]", ""), "expected '{'"},
        MalformedCase{"missing_shape",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': False}", ""),
                      "'shape' is missing"},
        MalformedCase{"unknown_key",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), "
                                    "'extra': 1}",
                                    std::string(4, '\0')),
                      "unexpected key 'extra'"},
        MalformedCase{"negative_dim",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                                    ""),
                      "negative dimension"},
        MalformedCase{"huge_shape",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                    "(4294967296, 4294967296), }",
                                    ""),
                      "too many elements"},
        MalformedCase{"huge_dim",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                    "(99999999999999999999999,), }",
                                    ""),
                      "too large"},
        MalformedCase{"unterminated",
                      NpyWithHeader("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)",
                                    ""),
                      "malformed header"},
        MalformedCase{"bad_bool",
                      NpyWithHeader("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
                                    ""),
                      "expected True or False"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.label; });

TEST(NpyTest, MissingFileIsNotFound) {
  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy("/nonexistent/dir/x.npy");
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(tensor.status().message()), HasSubstr("/nonexistent/dir/x.npy"));
}

TEST(NpyTest, DirectoryIsAClearError) {
  ScratchDir dir;
  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(dir.path().string());
  ASSERT_FALSE(tensor.ok());
  EXPECT_THAT(std::string(tensor.status().message()), HasSubstr("is a directory"));
}

// Random damage to a valid file never crashes the decoder: each result is
// either a tensor whose bytes match its shape or an error.
TEST(NpyTest, RandomCorruptionNeverCrashes) {
  const std::string valid = ValidNpy();
  std::mt19937 random(12345);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < flips; ++i) {
      bytes[random() % bytes.size()] = static_cast<char>(random());
    }
    if (random() % 4 == 0) bytes.resize(random() % bytes.size());
    absl::StatusOr<npu::v1::Tensor> tensor = DecodeNpy(bytes, "fuzz");
    if (tensor.ok()) {
      EXPECT_TRUE(CheckTensorBytes(*tensor).ok());
    }
  }
}

}  // namespace
}  // namespace npu::client
