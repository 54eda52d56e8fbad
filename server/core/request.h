// The one request every frontend translates its call into, and its answer:
// npu.v1 Run, KServe ModelInfer (gRPC and REST) and TrainingService
// Step/Evaluate all become a Request handed to core::Serve (serve.h), and each
// frontend encodes the Response in its own wire form. Nothing here knows a
// protocol: tensors are graph::HostTensors (viewing the frontend's bytes where
// it can), parameters are plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "npu/v1/graph.pb.h"
#include "npu/v1/memory.pb.h"
#include "npu/v1/profile.pb.h"
#include "server/device/cancel_token.h"
#include "server/device/float_mode.h"
#include "server/graph/host_tensor.h"

namespace npu::core {

using ParameterValue = std::variant<bool, int64_t, double, std::string>;
using Parameters = std::map<std::string, ParameterValue>;

// What a request runs.
struct ModelRef {  // a served model by name: the repository's, else a registered graph by id or name
  std::string name;
  std::string version;  // empty: the highest loaded
};
struct GraphRef {  // a graph the tenant registered, by id
  std::string id;
};
struct InlineGraph {  // planned for this request only; the frontend keeps it alive until the answer
  const v1::Graph* graph = nullptr;
};
struct TrainerRef {  // a training step or evaluation on one of the tenant's trainers
  enum class Call { kStep, kEvaluate };
  std::string id;
  Call call = Call::kStep;
};
using Target = std::variant<ModelRef, GraphRef, InlineGraph, TrainerRef>;

struct RequestInput {
  std::string name;
  graph::HostTensor tensor;  // may view the frontend's bytes (alive until the answer); unused with `handle`
  std::string handle;        // or: a device-resident tensor of the tenant
  bool release = false;      // the handle is freed once the request is answered, whether or not it ran
};

struct RequestOutput {
  std::string name;
};

// How errors name datatypes: in the caller's protocol's words ("FLOAT32" in
// npu.v1, "FP32" in KServe). Dims of -1 are dims each request binds.
using DataTypeNamer = std::string (*)(v1::DataType);

struct Request {
  const char* method = "";  // the frontend's name for the call (logs, metrics)
  std::string tenant;
  std::string id;  // the client's request id, echoed in the response
  Target target;
  // Inputs by name (a trainer's are "x" and "labels"); each fed once.
  std::vector<RequestInput> inputs;
  std::vector<RequestOutput> outputs;  // empty: every output, in the model's order
  // Outputs answered as handles (device-resident tensors) instead of bytes.
  std::vector<std::string> keep_on_device;
  bool keep_all_on_device = false;
  std::string device;            // "npu:N" ("cuda:N" too); empty: see least_busy_device
  bool least_busy_device = false;  // without `device`: the least busy device rather than npu:0
  bool profile = false;          // answer the run's profile (a batched run's is shared)
  bool profile_nodes = false;    // ... with its per-node rows, where the frontend reports them
  bool debug = false;            // also every intermediate; runs a plan without fusion
  // The fp16 conversions' float mode of an inference run: a plan is made and
  // cached per (preset, mode). A trainer's is its own (TrainConfig).
  device::FloatMode float_mode = device::FloatMode::kPreset;
  // npu compare's bench run: the graph as a GPU computes it (device::AsBench),
  // unfused; float_mode is then ignored.
  bool bench = false;
  bool return_predictions = false;  // Evaluate: the model's outputs for the batch
  // Dynamic batching (a model whose config has dynamic_batching): 0 takes the
  // model's default priority level / queue timeout.
  uint64_t priority = 0;
  std::chrono::microseconds timeout{0};
  DataTypeNamer dtype_name = nullptr;  // null: npu.v1's names
  std::shared_ptr<device::CancelToken> cancel;  // fired by the frontend when its caller gives up
};

struct ResponseOutput {
  std::string name;
  graph::HostTensor tensor;               // the result; empty when kept on the device
  std::optional<v1::TensorHandle> handle;  // set when kept on the device
};

// How the request was executed: what every response reports.
struct Execution {
  int64_t batch_size = 1;                  // rows of the device run (a dynamic batch's sum)
  int64_t rows = 1;                        // this request's own rows (its batch dim; 1 without batching)
  int64_t requests = 1;                    // requests that shared the run
  std::chrono::nanoseconds queue{0};       // waiting in the model's batcher
  std::chrono::nanoseconds compute{0};     // binding, device run and splitting the results
  // compute's parts (Triton's compute_input / compute_infer / compute_output):
  // binding or joining the inputs and planning; the device run, from its
  // submission (its wait for the device included); the outputs split and kept.
  std::chrono::nanoseconds compute_input{0}, compute_infer{0}, compute_output{0};
};

struct Response {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<ResponseOutput> outputs;        // the requested ones, in request (else model) order
  std::vector<ResponseOutput> intermediates;  // debug runs
  std::shared_ptr<const v1::Profile> profile;  // the run's, when asked (shared by a batch's requests)
  std::vector<v1::Profile> profiles;           // a training step's, one per device, when asked
  Parameters values;  // scalar results of a trainer call (loss, step, ...), by name
  Execution execution;
};

// The device's preset as this request runs it: in its float mode, or as the bench.
inline device::DevicePreset PresetFor(const device::DevicePreset& device, const Request& req) {
  return req.bench ? device::AsBench(device) : device::InFloatMode(device, req.float_mode);
}

}  // namespace npu::core
