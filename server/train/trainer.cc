#include "server/train/trainer.h"

#include <algorithm>
#include <future>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "server/device/collective_group.h"
#include "server/graph/runner.h"
#include "server/train/amp.h"
#include "server/train/host_tensors.h"
#include "server/train/optimizer.h"
#include "server/train/training_forward.h"

namespace npu::train {
namespace {

using graph::HostTensor;

// Binds tensors to a plan's inputs by name.
absl::StatusOr<std::vector<HostTensor>> Bind(const graph::Plan& plan,
                                             const std::unordered_map<std::string, HostTensor>& by_name) {
  std::vector<HostTensor> inputs;
  for (int v : plan.inputs) {
    auto it = by_name.find(plan.values[v].name);
    if (it == by_name.end()) {
      return absl::InternalError(absl::StrCat("training graph input \"", plan.values[v].name, "\" is not bound"));
    }
    inputs.push_back(it->second);
  }
  return inputs;
}

std::unordered_map<std::string, HostTensor> ByName(const graph::Plan& plan, std::vector<HostTensor> outputs) {
  std::unordered_map<std::string, HostTensor> out;
  for (size_t i = 0; i < plan.outputs.size(); ++i) out[plan.values[plan.outputs[i]].name] = std::move(outputs[i]);
  return out;
}

// Row counts of the shards of a batch of `rows` over `n` devices.
std::vector<int64_t> ShardSizes(int64_t rows, int64_t n) {
  std::vector<int64_t> sizes(static_cast<size_t>(n), rows / n);
  for (int64_t i = 0; i < rows % n; ++i) ++sizes[i];
  return sizes;
}

// `x` with `rows` rows: a shard's data shape.
graph::Shape WithRows(graph::Shape x, int64_t rows) {
  x[0] = rows;
  return x;
}

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 31);
}

}  // namespace

Trainer::Trainer(ModelSpec spec, TrainConfig config, std::vector<device::Device*> devices)
    : spec_(std::move(spec)),
      config_(config),
      devices_(std::move(devices)),
      preset_(device::InFloatMode(devices_[0]->preset(), config.float_mode)),
      scaler_(config.loss_scale) {}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(ModelSpec spec, TrainConfig config,
                                                         std::vector<device::Device*> devices) {
  if (auto s = ValidateConfig(config); !s.ok()) return s;
  if (devices.empty()) return absl::InvalidArgumentError("a trainer needs at least one device");
  for (device::Device* d : devices) {
    if (d->preset().name != devices[0]->preset().name) {
      return absl::InvalidArgumentError(absl::StrCat("the devices of a trainer must be alike: ", devices[0]->id(),
                                                     " is ", devices[0]->preset().name, ", ", d->id(), " is ",
                                                     d->preset().name));
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (devices[i] == devices[j]) return absl::InvalidArgumentError(absl::StrCat(devices[i]->id(), " is listed twice"));
    }
  }
  std::unique_ptr<Trainer> t(new Trainer(std::move(spec), config, std::move(devices)));
  Replica r;
  const OptimizerKind kind = t->config_.optimizer.kind;
  const bool saturate = t->preset_.fp16_saturation;
  for (const std::string& p : t->spec_.params) {
    const v1::Tensor& init = FindInitializer(t->spec_.graph, p)->tensor();
    const graph::DataType dtype = ModelDtype(t->config_.amp, t->spec_, p);
    r.params.push_back(FromProto(init, dtype, saturate));
    const bool masters = HasMasters(t->config_.amp, t->spec_, p);
    r.masters.push_back(masters ? FromProto(init, v1::FLOAT32, saturate) : HostTensor());
    // Without masters an fp16 parameter's optimizer state is fp16 too (O3).
    const graph::DataType state = dtype == v1::FLOAT16 && !masters ? v1::FLOAT16 : v1::FLOAT32;
    std::vector<HostTensor> slots;
    for (int s = 0; s < StateSlots(kind); ++s) slots.push_back(Zeros({state, TypeOf(init).shape}));
    r.state.push_back(std::move(slots));
  }
  for (const std::string& b : t->spec_.buffers) {
    r.buffers.push_back(FromProto(FindInitializer(t->spec_.graph, b)->tensor(), v1::FLOAT32, saturate));
  }
  MutexLock step(&t->step_mu_);
  {
    MutexLock lock(&t->mu_);
    t->replicas_.assign(t->devices_.size(), r);
  }
  // Plan a step once now, so a model that cannot be trained says so at once
  // (one with other dynamic dims than the batch: at its first step).
  if (OnlyTheBatchIsDynamic(t->spec_)) {
    const auto& dims = t->spec_.graph.inputs(0).shape();
    if (auto plan = t->StepPlanFor(WithRows({dims.begin(), dims.end()}, 1)); !plan.ok()) return plan.status();
  }
  return t;
}

// The plan (and signature) of `build(x)`'s graph, cached in `plans`.
template <typename Planned, typename Build>
absl::StatusOr<const Planned*> PlanOnce(std::map<graph::Shape, Planned>& plans, const graph::Shape& x,
                                        const device::DevicePreset& preset, Build build) {
  auto it = plans.find(x);
  if (it != plans.end()) return &it->second;
  auto built = build(x);
  if (!built.ok()) return built.status();
  auto plan = graph::BuildPlan(std::make_shared<const v1::Graph>(std::move(built->graph)), preset);
  if (!plan.ok()) return plan.status();
  return &(plans[x] = Planned{*std::move(plan), std::move(built->sig)});
}

absl::StatusOr<const Trainer::StepPlan*> Trainer::StepPlanFor(const graph::Shape& x) {
  const device::DevicePreset& preset = preset_;
  const int world = static_cast<int>(devices_.size());
  return PlanOnce(step_plans_, x, preset,
                  [&](const graph::Shape& s) { return BuildStepGraph(spec_, config_, s, preset, world); });
}

absl::StatusOr<Trainer::EvalPlan> Trainer::EvalPlanFor(const graph::Shape& x) {
  const device::DevicePreset& preset = preset_;
  MutexLock lock(&eval_mu_);
  if (eval_plans_.size() >= kMaxPlannedShapes) eval_plans_.clear();
  auto plan = PlanOnce(eval_plans_, x, preset,
                       [&](const graph::Shape& s) { return BuildEvalGraph(spec_, config_, s, preset); });
  if (!plan.ok()) return plan.status();
  return **plan;  // a copy: the cache may be cleared while it runs
}

absl::Status Trainer::CheckBatch(const HostTensor& x, const HostTensor& labels) const {
  const graph::Shape& xs = x.type().shape;
  if (auto s = CheckDataShape(spec_, xs); !s.ok()) return s;
  if (x.type().dtype != v1::FLOAT32) {
    return absl::InvalidArgumentError(absl::StrCat("the batch \"", spec_.graph.inputs(0).name(),
                                                   "\" must be FLOAT32, got ", graph::ToString(x.type())));
  }
  if (labels.type().shape.empty() || labels.type().shape[0] != xs[0]) {
    return absl::InvalidArgumentError(absl::StrCat("the labels ", graph::ToString(labels.type()),
                                                   " must have one row per example (", xs[0], ")"));
  }
  if (config_.loss == LossKind::kCrossEntropy && (labels.type().dtype != v1::INT64 || labels.type().shape.size() != 1)) {
    return absl::InvalidArgumentError(absl::StrCat("cross_entropy labels must be INT64 [", xs[0], "] class indices, got ",
                                                   graph::ToString(labels.type())));
  }
  if (config_.loss == LossKind::kMse && labels.type().dtype != v1::FLOAT32) {
    return absl::InvalidArgumentError(absl::StrCat("mse targets must be FLOAT32, got ", graph::ToString(labels.type())));
  }
  return absl::OkStatus();
}

absl::StatusOr<StepResult> Trainer::Step(const HostTensor& x, const HostTensor& labels, bool profile,
                                         std::shared_ptr<device::CancelToken> cancel) {
  if (auto s = CheckBatch(x, labels); !s.ok()) return s;
  MutexLock step_lock(&step_mu_);
  if (step_plans_.size() >= kMaxPlannedShapes) step_plans_.clear();
  const int64_t batch = x.type().shape[0];
  const int64_t n = static_cast<int64_t>(devices_.size());
  if (batch < n) {
    return absl::InvalidArgumentError(absl::StrCat("a batch of ", batch, " rows cannot be split over ", n, " devices"));
  }
  const std::vector<int64_t> sizes = ShardSizes(batch, n);
  // The state this step starts from (only steps change it, and they hold
  // step_mu_): tensors are shared, not copied.
  double scale = 0;
  int64_t updates = 0, steps = 0;
  std::vector<Replica> replicas;
  {
    MutexLock lock(&mu_);
    scale = scaler_.scale();
    updates = updates_;
    steps = step_;
    replicas = replicas_;
  }
  StepResult result;
  result.loss_scale = scale;
  std::vector<std::shared_ptr<const graph::Plan>> plans(static_cast<size_t>(n));
  std::vector<std::vector<HostTensor>> bound(static_cast<size_t>(n));
  int64_t row = 0;
  for (int64_t d = 0; d < n; ++d) {
    auto sp = StepPlanFor(WithRows(x.type().shape, sizes[d]));
    if (!sp.ok()) return sp.status();
    const StepSignature& sig = (*sp)->sig;
    const Replica& rep = replicas[d];
    std::unordered_map<std::string, HostTensor> in;
    in[sig.x] = Rows(x, row, sizes[d]);
    in[sig.labels] = Rows(labels, row, sizes[d]);
    row += sizes[d];
    // Each shard's mean loss, weighted by its share of the batch, sums to the batch's mean.
    in[sig.loss_seed] = ScalarF32(static_cast<float>(scale * static_cast<double>(sizes[d]) / static_cast<double>(batch)));
    in[sig.grad_scale] = ScalarF32(static_cast<float>(1.0 / scale));
    in[sig.lr] = ScalarF32(static_cast<float>(config_.optimizer.lr));
    if (!sig.step.empty()) in[sig.step] = ScalarI64(updates + 1);
    if (!sig.dropout_seed.empty()) {
      in[sig.dropout_seed] = ScalarI64(static_cast<int64_t>(Mix(Mix(config_.seed, static_cast<uint64_t>(steps)),
                                                                static_cast<uint64_t>(d))));
    }
    for (size_t i = 0; i < spec_.params.size(); ++i) {
      in[sig.params[i]] = rep.params[i];
      if (!sig.masters[i].empty()) in[sig.masters[i]] = rep.masters[i];
      for (size_t s = 0; s < sig.state[i].size(); ++s) in[sig.state[i][s]] = rep.state[i][s];
    }
    // DDP's broadcast_buffers: every replica starts the step with rank 0's running statistics.
    for (size_t b = 0; b < spec_.buffers.size(); ++b) in[sig.buffers[b]] = replicas[0].buffers[b];
    auto inputs = Bind(*(*sp)->plan, in);
    if (!inputs.ok()) return inputs.status();
    plans[d] = (*sp)->plan;
    bound[d] = *std::move(inputs);
  }
  auto runs = RunOnDevices(plans, std::move(bound), profile, cancel);
  if (!runs.ok()) return runs.status();
  // A caller who gave up while the devices finished gets no update either:
  // a cancelled step changes nothing (the replicas take the outputs below).
  if (cancel != nullptr && cancel->cancelled()) return cancel->reason();
  std::vector<std::unordered_map<std::string, HostTensor>> outputs(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    graph::ExecResult& run = (*runs)[d];
    result.overflow_elements += run.overflow_elements;
    if (profile) result.profiles.push_back(std::move(run.profile));
    outputs[d] = ByName(*plans[d], std::move(run.outputs));
  }
  // Every run succeeded: the replicas take their outputs.
  bool found = false;
  MutexLock lock(&mu_);
  for (int64_t d = 0; d < n; ++d) {
    const StepSignature& sig = step_plans_.at(WithRows(x.type().shape, sizes[d])).sig;
    auto& out = outputs[d];
    result.loss += static_cast<double>(out.at(sig.loss).as<float>()[0]) * static_cast<double>(sizes[d]) /
                   static_cast<double>(batch);
    found = found || out.at(sig.found_inf).as<float>()[0] != 0.0f;
    Replica& rep = replicas_[d];
    for (size_t i = 0; i < spec_.params.size(); ++i) {
      rep.params[i] = out.at(sig.params_out[i]);
      if (!sig.masters_out[i].empty()) rep.masters[i] = out.at(sig.masters_out[i]);
      for (size_t s = 0; s < sig.state_out[i].size(); ++s) rep.state[i][s] = out.at(sig.state_out[i][s]);
    }
    for (size_t b = 0; b < spec_.buffers.size(); ++b) rep.buffers[b] = out.at(sig.buffers_out[b]);
  }
  result.skipped = SkipsOnOverflow(config_) && scaler_.Update(found);
  ++step_;
  if (!result.skipped) ++updates_;
  result.step = step_;
  result.next_loss_scale = scaler_.scale();
  return result;
}

absl::StatusOr<std::vector<graph::ExecResult>> Trainer::RunOnDevices(
    const std::vector<std::shared_ptr<const graph::Plan>>& plans, std::vector<std::vector<HostTensor>> inputs,
    bool profile, std::shared_ptr<device::CancelToken> cancel) {
  const size_t n = devices_.size();
  if (n == 1) {
    graph::ExecOptions options;
    options.profile = profile;
    auto run = graph::RunPlan(plans[0], std::move(inputs[0]), options, *devices_[0], std::move(cancel));
    if (!run.ok()) return run.status();
    std::vector<graph::ExecResult> results;
    results.push_back(*std::move(run));
    return results;
  }
  // The ranks meet in a collective group. A rank that fails (or is dropped
  // while queued) aborts it, so the others stop waiting; the caller's token
  // fans out to one token per rank (a token feeds one job).
  auto group = std::make_shared<device::CollectiveGroup>(static_cast<int>(n), preset_);
  if (cancel == nullptr) cancel = std::make_shared<device::CancelToken>();
  std::vector<std::shared_ptr<device::CancelToken>> tokens(n);
  for (auto& t : tokens) t = std::make_shared<device::CancelToken>();
  if (!cancel->SetHook([tokens, group, cancel] {
        for (const auto& t : tokens) t->Cancel(cancel->reason());
        group->Abort(cancel->reason());
      })) {
    return cancel->reason();
  }
  struct Wait {
    Mutex mu;
    CondVar cv;
    size_t left ABSL_GUARDED_BY(mu) = 0;
    absl::Status first_error ABSL_GUARDED_BY(mu);
    std::vector<absl::StatusOr<graph::ExecResult>> results;
  };
  auto wait = std::make_shared<Wait>();
  wait->left = n;
  wait->results.assign(n, absl::InternalError("the run did not finish"));
  {
    // Submitted in one order on every device, under one lock for all trainers:
    // the ranks of two steps never wait for each other in opposite orders.
    static Mutex* launch = new Mutex();
    MutexLock lock(launch);
    for (size_t d = 0; d < n; ++d) {
      graph::ExecOptions options;
      options.profile = profile;
      options.collective = group;
      options.rank = static_cast<int>(d);
      graph::RunPlanAsync(plans[d], std::move(inputs[d]), std::move(options), *devices_[d], tokens[d],
                          [wait, group, d](absl::StatusOr<graph::ExecResult> r) {
                            if (!r.ok()) group->Abort(r.status());
                            MutexLock l(&wait->mu);
                            if (!r.ok() && wait->first_error.ok()) wait->first_error = r.status();
                            wait->results[d] = std::move(r);
                            if (--wait->left == 0) wait->cv.SignalAll();
                          });
    }
  }
  MutexLock l(&wait->mu);
  while (wait->left > 0) wait->cv.Wait(&wait->mu);
  cancel->ClearHook();
  if (!wait->first_error.ok()) {
    // A run the caller cancelled reports the caller's reason.
    return cancel->cancelled() ? cancel->reason() : wait->first_error;
  }
  std::vector<graph::ExecResult> results;
  for (auto& r : wait->results) results.push_back(*std::move(r));
  return results;
}

absl::StatusOr<EvalResult> Trainer::Evaluate(const HostTensor& x, const HostTensor& labels,
                                             std::shared_ptr<device::CancelToken> cancel) {
  if (auto s = CheckBatch(x, labels); !s.ok()) return s;
  const int64_t batch = x.type().shape[0];
  auto ep = EvalPlanFor(x.type().shape);
  if (!ep.ok()) return ep.status();
  const EvalSignature& sig = ep->sig;
  std::unordered_map<std::string, HostTensor> in{{sig.x, x}, {sig.labels, labels}};
  {
    // The parameters the last step committed (shared tensors); the run needs no lock.
    MutexLock lock(&mu_);
    const Replica& rep = replicas_[0];
    for (size_t i = 0; i < spec_.params.size(); ++i) in[sig.params[i]] = rep.params[i];
    for (size_t b = 0; b < spec_.buffers.size(); ++b) in[sig.buffers[b]] = rep.buffers[b];
  }
  auto inputs = Bind(*ep->plan, in);
  if (!inputs.ok()) return inputs.status();
  auto run = graph::RunPlan(ep->plan, *std::move(inputs), graph::ExecOptions{}, *devices_[0], cancel);
  if (!run.ok()) return run.status();
  auto out = ByName(*ep->plan, std::move(run->outputs));
  EvalResult r;
  r.loss = out.at(sig.loss).as<float>()[0];
  r.count = batch;
  r.predictions = AsFloats(out.at(sig.prediction));
  if (config_.loss == LossKind::kCrossEntropy) {
    const int64_t classes = static_cast<int64_t>(r.predictions.size()) / batch;
    for (int64_t i = 0; i < batch; ++i) {
      const float* row = r.predictions.data() + i * classes;
      const int64_t best = std::max_element(row, row + classes) - row;
      r.correct += best == labels.as<int64_t>()[i];
    }
  }
  return r;
}

TrainerState Trainer::State() const {
  MutexLock lock(&mu_);
  return TrainerState{step_, updates_, scaler_.scale(), scaler_.clean_steps(), replicas_[0]};
}

Replica Trainer::ReplicaOf(size_t d) const {
  MutexLock lock(&mu_);
  return replicas_.at(d);
}

absl::Status Trainer::Restore(const TrainerState& state) {
  MutexLock step_lock(&step_mu_);  // between steps, never inside one
  MutexLock lock(&mu_);
  const Replica& now = replicas_[0];
  const Replica& r = state.replica;
  auto same = [](const std::vector<HostTensor>& a, const std::vector<HostTensor>& b, const char* what) {
    if (a.size() != b.size()) return absl::InvalidArgumentError(absl::StrCat("the checkpoint has ", b.size(), " ", what, ", the trainer ", a.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (!(a[i].type() == b[i].type())) {
        return absl::InvalidArgumentError(absl::StrCat("checkpoint ", what, " ", i, " is ", graph::ToString(b[i].type()),
                                                       ", the trainer's ", graph::ToString(a[i].type())));
      }
    }
    return absl::OkStatus();
  };
  for (auto s : {same(now.params, r.params, "parameters"), same(now.masters, r.masters, "master weights"),
                 same(now.buffers, r.buffers, "running statistics")}) {
    if (!s.ok()) return s;
  }
  if (r.state.size() != now.state.size()) return absl::InvalidArgumentError("the checkpoint's optimizer state does not match");
  for (size_t i = 0; i < r.state.size(); ++i) {
    if (auto s = same(now.state[i], r.state[i], "optimizer state tensors"); !s.ok()) return s;
  }
  replicas_.assign(devices_.size(), r);
  step_ = state.step;
  updates_ = state.updates;
  scaler_.Restore(state.loss_scale, state.clean_steps);
  return absl::OkStatus();
}

v1::Graph Trainer::TrainedModel() const {
  MutexLock lock(&mu_);
  v1::Graph g = spec_.graph;
  const Replica& r = replicas_[0];
  std::unordered_map<std::string, const HostTensor*> value;
  for (size_t i = 0; i < spec_.params.size(); ++i) {
    value[spec_.params[i]] = r.masters[i].type().dtype == v1::FLOAT32 && r.masters[i].bytes() > 0 ? &r.masters[i]
                                                                                                     : &r.params[i];
  }
  for (size_t b = 0; b < spec_.buffers.size(); ++b) value[spec_.buffers[b]] = &r.buffers[b];
  for (auto& init : *g.mutable_initializers()) {
    auto it = value.find(init.name());
    if (it == value.end()) continue;
    const std::vector<float> f = AsFloats(*it->second);  // an fp16 model exports its fp32 masters
    init.mutable_tensor()->set_dtype(v1::FLOAT32);
    init.mutable_tensor()->set_data(std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4));
  }
  return g;
}

}  // namespace npu::train
