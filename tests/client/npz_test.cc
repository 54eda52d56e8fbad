// .npz archives (client/npz.h) as NumPy writes them, and a hostile one: a
// deflated member whose declared size deflate cannot produce is refused before
// anything is allocated for it (the reader once made a string of the declared
// size first, up to 16 GiB, for a file of a few hundred bytes).
#include "client/npz.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace npu::client {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

TEST(NpzTest, ReadsWhatNumpyWritesAndRefusesImpossibleSizes) {
  ScratchDir dir;
  const std::string path = dir.File("a.npz");
  auto py = testing::RunPython(dir, "np.savez_compressed('" + path + "', x=np.arange(1000, dtype=np.float32))");
  ASSERT_EQ(py.exit_code, 0) << py.output;
  auto arrays = ReadNpz(path);
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  ASSERT_EQ(arrays->count("x"), 1u);
  EXPECT_EQ(arrays->at("x").data().size(), 4000u);

  // The same archive claiming 4 GiB for the member, in its central directory and local header.
  std::string bytes = testing::ReadFileBytes(path);
  const uint32_t huge = 0xFFFFFF00u;
  for (const char* sig : {"PK\x01\x02", "PK\x03\x04"}) {
    const size_t at = bytes.find(sig);
    ASSERT_NE(at, std::string::npos);
    std::memcpy(&bytes[at + (sig[2] == 1 ? 24 : 22)], &huge, 4);
  }
  const std::string lie = dir.File("lie.npz");
  testing::WriteFileBytes(lie, bytes);
  auto refused = ReadNpz(lie);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("more than deflate can produce"));
}

}  // namespace
}  // namespace npu::client
