// libFuzzer target over what a Run request goes through before and during
// execution: protobuf decoding, graph validation and shape inference
// (BuildPlan), the Run request's translation and input binding (as core::Serve
// binds) and, for small plans, execution on a
// simulated device. Any crash, sanitizer report or leak is a bug; errors are
// fine. Build and run: scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "npu/v1/runtime.pb.h"
#include "server/device/device.h"
#include "server/device/device_preset.h"
#include "server/graph/runner.h"
#include "server/graph/plan.h"
#include "server/core/input_binding.h"
#include "server/core/tensor_store.h"
#include "server/rpc/run_request.h"

namespace {

struct World {
  World() : device(0, *npu::device::PresetByName("ascend310"), Options()) {
    google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 is expected here; its log line is noise
  }
  static npu::device::DeviceOptions Options() {
    npu::device::DeviceOptions o;
    o.omp_threads = 1;
    o.max_queue = 4;
    return o;
  }
  npu::device::Device device;
  npu::core::TensorStore store;
};

// Small limits keep every input fast: the fuzzer looks for crashes, not for work.
constexpr npu::graph::PlanLimits kLimits{64, 1 << 16};
constexpr uint64_t kMaxExecutedBytes = 1 << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();
  npu::v1::RunRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  if (!req.has_graph()) return 0;
  auto plan = npu::graph::BuildPlan(std::shared_ptr<const npu::v1::Graph>(std::shared_ptr<void>(), &req.graph()),
                                       world->device.preset(), kLimits);
  if (!plan.ok()) return 0;
  auto translated = npu::rpc::TranslateRun(req);
  if (!translated.ok()) return 0;
  const npu::core::BindSubject subject{"the graph"};
  auto inputs = npu::core::BindInputs(npu::core::DeclaredInputs(**plan), translated->inputs, subject, "",
                                      world->device, world->store);
  if (!inputs.ok() || !npu::core::CheckPlanInputs(**plan, *inputs, subject).ok()) return 0;
  if ((*plan)->value_bytes > kMaxExecutedBytes) return 0;
  // The same entry point the server's Run takes.
  auto result = npu::graph::RunPlan(*plan, *std::move(inputs), npu::graph::ExecOptions{true, true, ""},
                                    world->device);
  (void)result;
  return 0;
}
