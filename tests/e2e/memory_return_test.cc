// The server gives back the memory of a big graph once it is unregistered: a
// 20,000-node graph registered, run and unregistered three times leaves the
// server's RSS near where it started (issue 11: it used to keep ~150 MB per
// 100,000 nodes, growing with each repeat). npu-bench graph-memory measures
// the 100,000-node case.
#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/process_rss.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // a sanitizer's allocator keeps freed memory in quarantine on purpose
#else
constexpr bool kSanitized = false;
#endif

v1::Graph AddChain(int nodes) {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  x->add_shape(4);
  std::string prev = "x";
  for (int i = 0; i < nodes; ++i) {
    const std::string out = absl::StrCat("v", i);
    AddNode(g, absl::StrCat("add", i), "Add", {prev, "x"}, {out});
    prev = out;
  }
  g.add_outputs(prev);
  return g;
}

TEST(MemoryReturn, AnUnregisteredGraphsMemoryComesBack) {
  if (kSanitized) GTEST_SKIP() << "the sanitizer's allocator keeps freed memory by design";
  ServerProcess server;
  auto runtime = v1::RuntimeService::NewStub(TestChannel(server.target()));
  const int64_t start_kib = bench::RssKiB(server.pid());
  int64_t registered_kib = 0;
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = AddChain(20000);
  for (int round = 0; round < 3; ++round) {
    v1::RegisterGraphResponse registered;
    ASSERT_TRUE(runtime->RegisterGraph(Ctx().get(), reg, &registered).ok());
    registered_kib = std::max(registered_kib, bench::RssKiB(server.pid()));
    v1::RunRequest run = AddRun();
    run.clear_graph();
    run.set_graph_id(registered.graph_id());
    run.mutable_inputs()->RemoveLast();  // the chain has one input, x
    v1::RunResponse resp;
    const grpc::Status ran = runtime->Run(Ctx().get(), run, &resp);
    ASSERT_TRUE(ran.ok()) << ran.error_message();
    v1::UnregisterGraphRequest unreg;
    unreg.set_graph_id(registered.graph_id());
    v1::UnregisterGraphResponse unreg_resp;
    ASSERT_TRUE(runtime->UnregisterGraph(Ctx().get(), unreg, &unreg_resp).ok());
  }
  ASSERT_GT(registered_kib - start_kib, 20 << 10) << "the graph should have taken tens of MiB";
  // The server returns freed memory within about a second; give it a few.
  int64_t now_kib = bench::RssKiB(server.pid());
  for (int i = 0; i < 50 && now_kib - start_kib > (8 << 10); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    now_kib = bench::RssKiB(server.pid());
  }
  EXPECT_LE(now_kib - start_kib, 8 << 10) << "start " << start_kib << " KiB, with the graph " << registered_kib
                                          << " KiB, now " << now_kib << " KiB";
}

}  // namespace
}  // namespace npu::testing
