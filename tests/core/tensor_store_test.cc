// TensorStore: handles are per tenant, memory is charged to the device and the
// tenant's quota and returned on free or idle expiry, and a stored tensor is
// the store's own copy.
#include "server/core/tensor_store.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/core_test_support.h"

namespace npu::core {
namespace {

using ::testing::HasSubstr;
using testing::FloatTensor;

TEST(TensorStoreTest, AHandleBelongsToItsTenantOnly) {
  device::Device dev = testing::MakeDevice();
  TensorStore store;
  auto h = store.Put("alice", &dev, FloatTensor({1, 2, 3}));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(store.Get("alice", h->handle()).ok());
  // Another tenant sees exactly what a handle that never existed gives.
  auto theirs = store.Get("bob", h->handle());
  auto nobody = store.Get("bob", "no-such-handle");
  EXPECT_EQ(theirs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(nobody.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Free("bob", h->handle()).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store.List("bob").empty());
  ASSERT_EQ(store.List("alice").size(), 1u);
  EXPECT_TRUE(store.Free("alice", h->handle()).ok());
  EXPECT_EQ(store.Get("alice", h->handle()).status().code(), absl::StatusCode::kNotFound);
}

TEST(TensorStoreTest, MemoryIsChargedAndReturned) {
  device::Device dev = testing::MakeDevice();
  TensorStore store;
  auto a = store.Put("t", &dev, FloatTensor({1, 2, 3, 4}));
  auto b = store.Put("t", &dev, FloatTensor({5, 6}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(dev.memory_used(), 24u);
  EXPECT_EQ(store.tenant_bytes("t"), 24u);
  ASSERT_TRUE(store.Free("t", a->handle()).ok());
  EXPECT_EQ(dev.memory_used(), 8u);
  EXPECT_EQ(store.tenant_bytes("t"), 8u);
}

TEST(TensorStoreTest, TheQuotaIsPerTenantAndNamed) {
  device::Device dev = testing::MakeDevice();
  TensorStore store(TensorStoreOptions{/*tenant_quota_bytes=*/16});
  ASSERT_TRUE(store.Put("a", &dev, FloatTensor({1, 2, 3})).ok());  // 12 of 16
  auto over = store.Put("a", &dev, FloatTensor({4, 5}));          // 20 > 16
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("quota"));
  EXPECT_EQ(dev.memory_used(), 12u);  // a refused put charges nothing
  EXPECT_TRUE(store.Put("b", &dev, FloatTensor({4, 5, 6, 7})).ok());  // another tenant's own 16
}

TEST(TensorStoreTest, AStoredViewIsCopiedSoItsSourceMayChange) {
  device::Device dev = testing::MakeDevice();
  TensorStore store;
  std::vector<float> source = {1, 2};
  graph::HostTensor view({v1::FLOAT32, {2}}, nullptr, reinterpret_cast<const std::byte*>(source.data()));
  auto h = store.Put("t", &dev, view);
  ASSERT_TRUE(h.ok());
  source[0] = 99;
  auto got = store.Get("t", h->handle());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->tensor.as<float>()[0], 1.0f);
}

TEST(TensorStoreTest, IdleHandlesExpireAndTheirMemoryReturns) {
  device::Device dev = testing::MakeDevice();
  TensorStore store(TensorStoreOptions{0, std::chrono::seconds(10)});
  auto h = store.Put("t", &dev, FloatTensor({1, 2}));
  ASSERT_TRUE(h.ok());
  const auto now = TensorStore::Clock::now();
  EXPECT_EQ(store.ExpireIdle(now + std::chrono::seconds(5)), 0u);
  EXPECT_EQ(store.ExpireIdle(now + std::chrono::seconds(11)), 1u);
  EXPECT_EQ(dev.memory_used(), 0u);
  EXPECT_EQ(store.Get("t", h->handle()).status().code(), absl::StatusCode::kNotFound);
}

TEST(TensorStoreTest, HandlesAreUnguessable) {
  device::Device dev = testing::MakeDevice();
  TensorStore store;
  auto a = store.Put("t", &dev, FloatTensor({1}));
  auto b = store.Put("t", &dev, FloatTensor({1}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->handle(), b->handle());
  EXPECT_GE(a->handle().size(), 32u);  // 128 random bits, hex
}

}  // namespace
}  // namespace npu::core
