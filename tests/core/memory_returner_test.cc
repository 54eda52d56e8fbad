// MemoryReturner gives freed heap pages back: 64 MiB freed in small blocks by
// another thread, in an arena that blocks still in use keep from shrinking,
// leave the process's RSS up until a check trims it.
#include "server/core/memory_returner.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace npu::core {
namespace {

int64_t ResidentMiB() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  long long size = 0, resident = 0;
  EXPECT_EQ(std::fscanf(f, "%lld %lld", &size, &resident), 2);
  std::fclose(f);
  return resident * sysconf(_SC_PAGESIZE) >> 20;
}

// 64 MiB in 1 KiB blocks on a thread of its own (so in an arena of its own),
// touched, then freed but for one block in 64: what stays in use pins the
// arena, as a registered graph or a cached plan does, so free() cannot shrink it.
class Fragments {
 public:
  Fragments() {
    std::thread([this] {
      std::vector<char*> blocks(64 << 10);
      for (char*& b : blocks) {
        b = static_cast<char*>(std::malloc(1024));
        std::memset(b, 1, 1024);
      }
      for (size_t i = 0; i < blocks.size(); ++i) {
        if (i % 64 == 63) {
          kept_.push_back(blocks[i]);
        } else {
          std::free(blocks[i]);
        }
      }
    }).join();
  }
  ~Fragments() {
    for (char* b : kept_) std::free(b);
  }

 private:
  std::vector<char*> kept_;
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // the sanitizer's allocator, not glibc's, holds the memory
#else
constexpr bool kSanitized = false;
#endif

TEST(MemoryReturnerTest, ACheckReturnsWhatWasFreed) {
  if (kSanitized) GTEST_SKIP() << "glibc's heap is not the one in use under a sanitizer";
  MemoryReturner returner(std::chrono::hours(1), uint64_t{16} << 20);  // the test makes the checks
  returner.Check();  // the baseline
  const int64_t before = ResidentMiB();
  Fragments fragments;
  const int64_t freed_but_kept = ResidentMiB();
  ASSERT_GE(freed_but_kept - before, 48) << "glibc gave the memory back by itself: nothing to test";
  returner.Check();
  EXPECT_EQ(returner.trims(), 1u);
  EXPECT_LE(ResidentMiB() - before, 8) << "before " << before << " MiB, after free " << freed_but_kept << " MiB";
}

TEST(MemoryReturnerTest, LittleFreedMemoryIsLeftAlone) {
  MemoryReturner returner(std::chrono::hours(1), uint64_t{256} << 20);
  returner.Check();
  Fragments fragments;
  returner.Check();
  EXPECT_EQ(returner.trims(), 0u);
}

TEST(MemoryReturnerTest, TheWatcherChecksOnItsOwn) {
  if (kSanitized) GTEST_SKIP() << "glibc's heap is not the one in use under a sanitizer";
  MemoryReturner returner(std::chrono::milliseconds(20), uint64_t{16} << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // a baseline taken
  Fragments fragments;
  for (int i = 0; i < 200 && returner.trims() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(returner.trims(), 1u);
}

}  // namespace
}  // namespace npu::core
