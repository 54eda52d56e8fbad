#include "server/core/batched_inference.h"

#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/graph/runner.h"

namespace npu::core {
namespace {

// A queued request: what the runner needs of it.
class QueuedInference final : public BatchEntry {
 public:
  QueuedInference(std::shared_ptr<ServeCall> call, BatchedModel model, std::vector<graph::HostTensor> inputs)
      : call(std::move(call)), model(std::move(model)), inputs(std::move(inputs)) {}
  void Refuse(absl::Status why) override { call->Finish(std::move(why)); }

  const std::shared_ptr<ServeCall> call;
  const BatchedModel model;
  std::vector<graph::HostTensor> inputs;  // moved into the batch's run
};

QueuedInference& Queued(const std::shared_ptr<BatchEntry>& e) { return static_cast<QueuedInference&>(*e); }

// Requests merge when each input has the same dtype and non-batch dims.
// Requests merge when their rows can be stacked and they ask for the same
// numerics (a batch runs one plan, made in one float mode, or as the bench).
std::string MergeKey(const std::vector<graph::HostTensor>& inputs, const Request& req) {
  std::string key = absl::StrCat("mode ", static_cast<int>(req.float_mode), req.bench ? " bench;" : ";");
  for (const graph::HostTensor& t : inputs) {
    absl::StrAppend(&key, static_cast<int>(t.type().dtype), ":");
    for (size_t d = 1; d < t.type().shape.size(); ++d) absl::StrAppend(&key, t.type().shape[d], ",");
    key += ';';
  }
  return key;
}

// The request's batch dim: the first dim of every input, the same for all.
absl::StatusOr<int64_t> RowsOf(const std::vector<graph::HostTensor>& inputs, const std::vector<v1::ValueInfo>& declared,
                               const BindSubject& subject, int64_t max_batch_size) {
  int64_t rows = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const graph::Shape& shape = inputs[i].type().shape;
    const std::string what = absl::StrCat("input ", graph::Quoted(declared[i].name()), " of ", subject.name);
    if (shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is a scalar; the model batches along dim 0 (max_batch_size ",
                                                     max_batch_size, ")"));
    }
    if (rows >= 0 && shape[0] != rows) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has batch dim ", shape[0], " where the inputs before it have ",
                                                     rows, "; every input's first dim is the request's batch size"));
    }
    rows = shape[0];
  }
  if (rows < 1 || rows > max_batch_size) {
    return absl::InvalidArgumentError(absl::StrCat("the request's batch size ", rows, " is not in [1, max_batch_size ",
                                                   max_batch_size, "] of ", subject.name));
  }
  return rows;
}

// The device index a request must run on: the one it names, the one its
// handles are on (npu:0 unless named), or -1 for any instance.
absl::StatusOr<int> FixedDevice(const ServerState& state, const Request& req) {
  bool handles = false;
  for (const RequestInput& in : req.inputs) handles = handles || !in.handle.empty();
  if (req.device.empty() && req.least_busy_device && !handles) return -1;
  auto device = state.devices.Find(req.device);
  if (!device.ok()) return device.status();
  const auto& all = state.devices.devices();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].get() == *device) return static_cast<int>(i);
  }
  return absl::InternalError("device not in the pool");
}

// The batch's inputs: each request's rows one after the other along dim 0.
std::vector<graph::HostTensor> Concatenate(const std::vector<std::shared_ptr<BatchEntry>>& batch, int64_t rows) {
  std::vector<graph::HostTensor> out;
  const size_t n = Queued(batch.front()).inputs.size();
  for (size_t k = 0; k < n; ++k) {
    graph::TensorType type = Queued(batch.front()).inputs[k].type();
    type.shape[0] = rows;
    graph::HostTensor joined = graph::HostTensor::Allocate(type);
    std::byte* at = joined.mutable_data();
    for (const auto& e : batch) {
      const graph::HostTensor& part = Queued(e).inputs[k];
      if (part.bytes() > 0) std::memcpy(at, part.data(), part.bytes());
      at += part.bytes();
    }
    out.push_back(std::move(joined));
  }
  return out;
}

std::vector<DynamicBatcher::Answer> FailAll(const std::vector<std::shared_ptr<BatchEntry>>& batch,
                                            const absl::Status& why) {
  std::vector<DynamicBatcher::Answer> answers;
  for (const auto& e : batch) {
    answers.push_back([call = Queued(e).call, why] { call->Finish(why); });
  }
  return answers;
}

// Rows [first, first + rows) of a batched output, viewed in it.
graph::HostTensor RowsView(const std::shared_ptr<const graph::HostTensor>& whole, int64_t batch_rows, int64_t first,
                           int64_t rows) {
  graph::TensorType type = whole->type();
  type.shape[0] = rows;
  const uint64_t row_bytes = whole->bytes() / static_cast<uint64_t>(batch_rows);
  return graph::HostTensor(std::move(type), whole, whole->data() + row_bytes * static_cast<uint64_t>(first));
}

// One request's answer from the batch's run.
absl::StatusOr<Response> AnswerOf(ServerState& state, QueuedInference& q, const graph::Plan& plan,
                                  const std::vector<std::shared_ptr<const graph::HostTensor>>& outputs,
                                  int64_t batch_rows, int64_t first, device::Device* device) {
  const Request& req = q.call->request();
  auto selection = SelectOutputs(plan, req.outputs, req.keep_on_device, req.keep_all_on_device, q.model.subject);
  if (!selection.ok()) return selection.status();
  Response resp;
  resp.model_name = q.model.name;
  resp.model_version = q.model.version;
  for (size_t i = 0; i < selection->outputs.size(); ++i) {
    const size_t k = selection->outputs[i];
    ResponseOutput& out = resp.outputs.emplace_back();
    out.name = plan.values[plan.outputs[k]].name;
    graph::HostTensor rows = RowsView(outputs[k], batch_rows, first, q.rows);
    if (!selection->keep_on_device[i]) {
      out.tensor = std::move(rows);
      continue;
    }
    // A handle owns its bytes: the batch's buffer is not kept for one request's rows.
    graph::HostTensor own = graph::HostTensor::Allocate(rows.type());
    if (rows.bytes() > 0) std::memcpy(own.mutable_data(), rows.data(), rows.bytes());
    auto handle = state.tensors.Put(req.tenant, device, std::move(own));
    if (!handle.ok()) return handle.status();
    out.handle = *std::move(handle);
  }
  return resp;
}

// When the batch's steps began: its inputs joined and planned from the
// dispatch to `submitted`, run until `ran`.
struct BatchTimes {
  Clock::time_point submitted, ran;
};

std::vector<DynamicBatcher::Answer> Split(ServerState& state, const std::vector<std::shared_ptr<BatchEntry>>& batch,
                                          const graph::Plan& plan, device::Device* device, int64_t rows,
                                          absl::StatusOr<graph::ExecResult> run, BatchTimes times) {
  if (!run.ok()) return FailAll(batch, run.status());
  const BatchedModel& model = Queued(batch.front()).model;
  state.inference_metrics.ObserveExecution({model.name, model.version});
  std::vector<std::shared_ptr<const graph::HostTensor>> outputs;
  for (size_t k = 0; k < run->outputs.size(); ++k) {
    const graph::TensorType& type = run->outputs[k].type();
    if (type.shape.empty() || type.shape[0] != rows) {
      return FailAll(batch, absl::FailedPreconditionError(absl::StrCat(
                                Queued(batch.front()).model.subject.name, "'s output ",
                                graph::Quoted(plan.values[plan.outputs[k]].name), " has shape ",
                                graph::ShapeToString(type.shape), " for a batch of ", rows,
                                " rows: with dynamic batching every output's first dim must be the batch")));
    }
    outputs.push_back(std::make_shared<const graph::HostTensor>(std::move(run->outputs[k])));
  }
  std::shared_ptr<const v1::Profile> profile = std::make_shared<const v1::Profile>(std::move(run->profile));
  std::vector<DynamicBatcher::Answer> answers;
  int64_t first = 0;
  for (const auto& e : batch) {
    QueuedInference& q = Queued(e);
    const int64_t at = first;
    first += q.rows;
    if (q.cancel != nullptr && q.cancel->cancelled()) {  // gave up while the batch ran
      answers.push_back([call = q.call, why = q.cancel->reason()] { call->Finish(why); });
      continue;
    }
    auto resp = AnswerOf(state, q, plan, outputs, rows, at, device);
    if (resp.ok()) {
      if (q.call->request().profile) resp->profile = profile;
      Execution& x = resp->execution;
      x.batch_size = rows;
      x.rows = q.rows;
      x.requests = static_cast<int64_t>(batch.size());
      x.queue = q.dispatched - q.enqueued;
      const Clock::time_point now = Clock::now();
      x.compute_input = times.submitted - q.dispatched;
      x.compute_infer = times.ran - times.submitted;
      x.compute_output = now - times.ran;
      x.compute = now - q.dispatched;
    }
    answers.push_back([call = q.call, resp = std::make_shared<absl::StatusOr<Response>>(std::move(resp))] {
      call->Finish(std::move(*resp));
    });
  }
  return answers;
}

}  // namespace

void EnqueueBatched(const std::shared_ptr<ServeCall>& call, BatchedModel model, DynamicBatcher& batcher) {
  ServerState& state = call->state();
  Request& req = call->request();
  auto device = FixedDevice(state, req);
  if (!device.ok()) return call->Finish(device.status());
  // Only handles need the device to bind; any device does otherwise.
  const device::Device& bind_on = *state.devices.devices()[*device >= 0 ? *device : 0];
  const std::vector<v1::ValueInfo>& declared = model.graph->inputs();
  auto inputs = BindInputs(declared, req.inputs, model.subject, req.tenant, bind_on, state.tensors);
  if (!inputs.ok()) return call->Finish(inputs.status());
  auto rows = RowsOf(*inputs, declared, model.subject, batcher.policy().max_batch_size);
  if (!rows.ok()) return call->Finish(rows.status());
  const std::string key = MergeKey(*inputs, req);
  auto entry = std::make_shared<QueuedInference>(call, std::move(model), *std::move(inputs));
  entry->rows = *rows;
  entry->merge_key = key;
  entry->device = *device;
  entry->priority = req.priority;
  entry->timeout = std::chrono::duration_cast<std::chrono::microseconds>(req.timeout);
  entry->cancel = req.cancel;
  batcher.Enqueue(std::move(entry));
}

DynamicBatcher::Runner BatchRunner(ServerState& state) {
  return [&state](std::vector<std::shared_ptr<BatchEntry>> batch, int device_index, DynamicBatcher::BatchDone done) {
    device::Device* device = state.devices.devices()[device_index].get();
    QueuedInference& head = Queued(batch.front());
    int64_t rows = 0;
    bool profile = false;
    for (const auto& e : batch) {
      rows += e->rows;
      profile = profile || Queued(e).call->request().profile;
    }
    std::vector<graph::HostTensor> inputs;
    if (batch.size() == 1) {
      inputs = std::move(head.inputs);
    } else {
      try {
        inputs = Concatenate(batch, rows);
      } catch (const std::bad_alloc&) {
        return done(FailAll(batch, absl::ResourceExhaustedError(absl::StrCat(
                                       "out of host memory joining a batch of ", rows, " rows for ", head.model.subject.name))));
      }
    }
    const device::DevicePreset preset = PresetFor(device->preset(), head.call->request());
    auto plan = head.model.graph->PlanFor(preset, TypesOf(inputs), state.plan_limits());
    if (!plan.ok()) return done(FailAll(batch, plan.status()));
    if (auto s = CheckPlanInputs(**plan, inputs, head.model.subject); !s.ok()) return done(FailAll(batch, s));
    graph::ExecOptions options;
    options.profile = profile;
    const Clock::time_point submitted = Clock::now();
    // The batch is not cancelled with one request: the others still want it.
    graph::RunPlanAsync(*plan, std::move(inputs), std::move(options), *device, nullptr,
                        [&state, batch, plan = *plan, device, rows, submitted, done = std::move(done)](
                            absl::StatusOr<graph::ExecResult> run) {
                          const BatchTimes times{submitted, Clock::now()};
                          done(Split(state, batch, *plan, device, rows, std::move(run), times));
                        });
  };
}

}  // namespace npu::core
