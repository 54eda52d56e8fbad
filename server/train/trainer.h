// A model being trained on one or several devices of this server: its
// parameters, optimizer state and running statistics (one replica per
// device, as DDP keeps one per process), its loss scaler and step count, and
// the step and evaluation plans per data shape (planned once, on first use:
// the last, smaller batch of an epoch or a new sequence length is one more).
//
// A step splits the global batch evenly over the devices (the first B % n get
// one row more); each device runs the step graph (step_graph.h) on its shard
// through the runner; the devices' gradients are averaged by a ring allreduce
// inside the step; each shard's loss is weighted by its share of the batch.
//
// Thread-safe. Steps (and Restore) run one at a time, in order: each starts
// from the state the one before committed. The state itself is locked only to
// read it (a step's inputs, Evaluate's parameters, State, TrainedModel) or to
// commit a step's outputs, never across device work: an evaluation, a
// checkpoint or an export does not wait for a step's devices, nor a step for
// an evaluation's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "npu/v1/profile.pb.h"
#include "server/device/cancel_token.h"
#include "server/device/device.h"
#include "server/graph/executor.h"
#include "server/graph/plan.h"
#include "server/train/loss_scaler.h"
#include "server/train/model_spec.h"
#include "server/train/step_graph.h"
#include "server/train/train_config.h"

namespace npu::train {

// One device's copy of what training changes.
struct Replica {
  std::vector<graph::HostTensor> params;   // ModelSpec::params, in their amp dtype
  std::vector<graph::HostTensor> masters;  // O2: fp32 masters of fp16 params (empty tensor otherwise)
  std::vector<std::vector<graph::HostTensor>> state;  // per param, per optimizer slot
  std::vector<graph::HostTensor> buffers;  // ModelSpec::buffers
};

struct StepResult {
  int64_t step = 0;             // steps taken so far, this one included
  double loss = 0;              // the global batch's mean loss
  double loss_scale = 0;        // the scale this step ran with
  double next_loss_scale = 0;   // the scale the next step runs with
  bool skipped = false;         // the float status was set: no update
  uint64_t overflow_elements = 0;  // the float status summed over the devices
  std::vector<v1::Profile> profiles;  // per device, when asked
};

struct EvalResult {
  double loss = 0;       // mean over the batch
  int64_t correct = 0;   // cross_entropy: rows whose arg max is the label
  int64_t count = 0;
  std::vector<float> predictions;  // row-major prediction, FLOAT32
};

struct TrainerState {
  int64_t step = 0, updates = 0;
  double loss_scale = 0;
  int64_t clean_steps = 0;
  Replica replica;  // device 0's (every replica is bitwise the same)
};

class Trainer {
 public:
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(ModelSpec spec, TrainConfig config,
                                                         std::vector<device::Device*> devices);

  // One optimizer step on a global batch: x [B, ...] and labels/targets [B, ...].
  // When `cancel` fires before the step is applied, its device work stops and
  // the step changes nothing (the token's reason is returned).
  absl::StatusOr<StepResult> Step(const graph::HostTensor& x, const graph::HostTensor& labels, bool profile,
                                  std::shared_ptr<device::CancelToken> cancel = nullptr);
  // The loss (and accuracy, for cross_entropy) on a batch, on the first device.
  absl::StatusOr<EvalResult> Evaluate(const graph::HostTensor& x, const graph::HostTensor& labels,
                                      std::shared_ptr<device::CancelToken> cancel = nullptr);

  // Everything a checkpoint holds, and putting it back (types and shapes must match).
  TrainerState State() const;
  absl::Status Restore(const TrainerState& state);
  // The model as given, with the trained parameters (fp32) and running statistics.
  v1::Graph TrainedModel() const;

  const ModelSpec& spec() const { return spec_; }
  const TrainConfig& config() const { return config_; }
  const std::vector<device::Device*>& devices() const { return devices_; }
  // Device d's replica (tests compare them).
  Replica ReplicaOf(size_t d) const;

 private:
  Trainer(ModelSpec spec, TrainConfig config, std::vector<device::Device*> devices);

  struct StepPlan {
    std::shared_ptr<const graph::Plan> plan;
    StepSignature sig;
  };
  struct EvalPlan {
    std::shared_ptr<const graph::Plan> plan;
    EvalSignature sig;
  };
  absl::StatusOr<const StepPlan*> StepPlanFor(const graph::Shape& x) ABSL_EXCLUSIVE_LOCKS_REQUIRED(step_mu_);
  absl::StatusOr<EvalPlan> EvalPlanFor(const graph::Shape& x) ABSL_LOCKS_EXCLUDED(eval_mu_);
  absl::Status CheckBatch(const graph::HostTensor& x, const graph::HostTensor& labels) const;
  // Runs plans[d] on device d, all at once, as one data-parallel step.
  absl::StatusOr<std::vector<graph::ExecResult>> RunOnDevices(
      const std::vector<std::shared_ptr<const graph::Plan>>& plans, std::vector<std::vector<graph::HostTensor>> inputs,
      bool profile, std::shared_ptr<device::CancelToken> cancel) ABSL_LOCKS_EXCLUDED(mu_);

  // Data shapes whose plans are kept (a client may send any): past this the
  // cache starts again, so a step plans at most two more (its shard shapes).
  static constexpr size_t kMaxPlannedShapes = 8;

  const ModelSpec spec_;
  const TrainConfig config_;
  const std::vector<device::Device*> devices_;
  const device::DevicePreset preset_;  // the devices' preset in the trainer's float mode: what its plans are for
  // Held by a step from its start to its commit (device work included), and
  // by Restore: steps run in order. Taken before mu_.
  Mutex step_mu_;
  std::map<graph::Shape, StepPlan> step_plans_ ABSL_GUARDED_BY(step_mu_);
  Mutex eval_mu_;  // the evaluation plans only
  std::map<graph::Shape, EvalPlan> eval_plans_ ABSL_GUARDED_BY(eval_mu_);
  mutable Mutex mu_;  // the state below: never held across device work
  std::vector<Replica> replicas_ ABSL_GUARDED_BY(mu_);
  LossScaler scaler_ ABSL_GUARDED_BY(mu_);
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;     // steps taken
  int64_t updates_ ABSL_GUARDED_BY(mu_) = 0;  // steps not skipped (Adam's step count)
};

}  // namespace npu::train
