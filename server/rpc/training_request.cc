#include "server/rpc/training_request.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/core/amp_level.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/float_mode_from.h"
#include "server/rpc/tensor_codec.h"
#include "server/train/host_tensors.h"
#include "server/train/optimizer.h"

namespace npu::rpc {
namespace {

using train::OptimizerKind;

absl::StatusOr<train::OptimizerConfig> OptimizerFrom(const v1::OptimizerConfig& o) {
  train::OptimizerConfig c;
  switch (o.kind()) {
    case v1::OptimizerConfig::SGD: c.kind = OptimizerKind::kSgd; break;
    case v1::OptimizerConfig::MOMENTUM: c.kind = OptimizerKind::kMomentum; break;
    case v1::OptimizerConfig::ADAM: c.kind = OptimizerKind::kAdam; break;
    case v1::OptimizerConfig::ADAMW: c.kind = OptimizerKind::kAdamW; break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer.kind ", static_cast<int>(o.kind()), " is not set or unknown (SGD, MOMENTUM, ADAM, ADAMW)"));
  }
  c.lr = o.lr();
  if (o.has_momentum()) c.momentum = o.momentum().value();
  c.nesterov = o.nesterov();
  c.weight_decay = o.weight_decay();
  if (o.has_beta1()) c.beta1 = o.beta1().value();
  if (o.has_beta2()) c.beta2 = o.beta2().value();
  if (o.has_epsilon()) c.epsilon = o.epsilon().value();
  if (c.kind != OptimizerKind::kMomentum && (o.has_momentum() || o.nesterov())) {
    return absl::InvalidArgumentError("optimizer.momentum and optimizer.nesterov are for kind MOMENTUM");
  }
  if ((c.kind == OptimizerKind::kSgd || c.kind == OptimizerKind::kMomentum) &&
      (o.has_beta1() || o.has_beta2() || o.has_epsilon())) {
    return absl::InvalidArgumentError("optimizer.beta1, beta2 and epsilon are for kinds ADAM and ADAMW");
  }
  return c;
}

train::LossScaleConfig LossScaleFrom(const v1::AmpConfig& amp) {
  train::LossScaleConfig s;
  switch (amp.loss_scale_case()) {
    case v1::AmpConfig::kStaticScale: s.scale = amp.static_scale(); break;
    case v1::AmpConfig::kDynamic: {
      const v1::DynamicLossScale& d = amp.dynamic();
      s = train::ApexDynamicLossScale();
      if (d.init_scale() != 0) s.scale = d.init_scale();
      if (d.growth_interval() != 0) s.window = d.growth_interval();
      if (d.max_scale() != 0) s.max_scale = d.max_scale();
      s.min_scale = d.min_scale();
      break;
    }
    default: break;  // a static scale of 1
  }
  return s;
}

// A checkpoint tensor as a host tensor of its declared type; `what` names it.
absl::StatusOr<graph::HostTensor> Owned(const v1::Tensor& t, const std::string& what) {
  auto view = ViewTensor(t, what);
  if (!view.ok()) return view.status();
  return train::FromProto(t, view->type().dtype, /*saturate=*/false);  // its own dtype: nothing converts
}

}  // namespace

absl::StatusOr<train::TrainConfig> TrainConfigFromRequest(const v1::CreateTrainerRequest& req) {
  train::TrainConfig c;
  switch (req.loss()) {
    case v1::CROSS_ENTROPY: c.loss = train::LossKind::kCrossEntropy; break;
    case v1::MSE: c.loss = train::LossKind::kMse; break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("loss ", static_cast<int>(req.loss()), " is not set or unknown (CROSS_ENTROPY, MSE)"));
  }
  auto optimizer = OptimizerFrom(req.optimizer());
  if (!optimizer.ok()) return optimizer.status();
  c.optimizer = *optimizer;
  auto amp = core::AmpLevelOf(req.amp().opt_level());
  if (!amp.ok()) return amp.status();
  c.amp = *amp;
  c.loss_scale = LossScaleFrom(req.amp());
  c.seed = req.seed();
  auto float_mode = FloatModeFrom(req.float_mode(), "float_mode");
  if (!float_mode.ok()) return float_mode.status();
  c.float_mode = *float_mode;
  if (auto s = train::ValidateConfig(c); !s.ok()) return s;
  return c;
}

v1::TrainerCheckpoint CheckpointOf(const train::Trainer& trainer) {
  const train::TrainerState s = trainer.State();
  v1::TrainerCheckpoint c;
  c.set_step(s.step);
  c.set_updates(s.updates);
  c.set_loss_scale(s.loss_scale);
  c.set_clean_steps(s.clean_steps);
  c.set_optimizer(train::OptimizerName(trainer.config().optimizer.kind));
  c.set_amp(train::AmpName(trainer.config().amp));
  const train::Replica& r = s.replica;
  for (size_t i = 0; i < trainer.spec().params.size(); ++i) {
    v1::TrainerCheckpoint::Parameter* p = c.add_parameters();
    p->set_name(trainer.spec().params[i]);
    train::ToProto(r.params[i], p->mutable_value());
    if (r.masters[i].bytes() > 0) train::ToProto(r.masters[i], p->mutable_master());
    for (const graph::HostTensor& slot : r.state[i]) train::ToProto(slot, p->add_optimizer_state());
  }
  for (size_t b = 0; b < trainer.spec().buffers.size(); ++b) {
    v1::TrainerCheckpoint::Buffer* buf = c.add_buffers();
    buf->set_name(trainer.spec().buffers[b]);
    train::ToProto(r.buffers[b], buf->mutable_value());
  }
  return c;
}

absl::StatusOr<train::TrainerState> StateFromCheckpoint(const v1::TrainerCheckpoint& c, const train::Trainer& trainer) {
  const std::string optimizer = train::OptimizerName(trainer.config().optimizer.kind);
  const std::string amp = train::AmpName(trainer.config().amp);
  if (c.optimizer() != optimizer) {
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint is of optimizer ", graph::Quoted(c.optimizer()),
                                                   ", the trainer's is \"", optimizer, "\""));
  }
  if (c.amp() != amp) {
    return absl::InvalidArgumentError(
        absl::StrCat("the checkpoint is of amp ", graph::Quoted(c.amp()), ", the trainer's is \"", amp, "\""));
  }
  const train::ModelSpec& spec = trainer.spec();
  if (c.parameters_size() != static_cast<int>(spec.params.size()) ||
      c.buffers_size() != static_cast<int>(spec.buffers.size())) {
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint has ", c.parameters_size(), " parameters and ",
                                                   c.buffers_size(), " running statistics, the trainer ",
                                                   spec.params.size(), " and ", spec.buffers.size()));
  }
  if (c.step() < 0 || c.updates() < 0 || c.updates() > c.step() || c.clean_steps() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint's step ", c.step(), ", updates ", c.updates(),
                                                   " and clean steps ", c.clean_steps(), " do not fit together"));
  }
  if (!(c.loss_scale() > 0) || !std::isfinite(c.loss_scale())) {
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint's loss scale ", c.loss_scale(), " is not positive"));
  }
  train::TrainerState s;
  s.step = c.step();
  s.updates = c.updates();
  s.loss_scale = c.loss_scale();
  s.clean_steps = c.clean_steps();
  for (int i = 0; i < c.parameters_size(); ++i) {
    const v1::TrainerCheckpoint::Parameter& p = c.parameters(i);
    if (p.name() != spec.params[i]) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint parameter ", i, " is ", graph::Quoted(p.name()),
                                                     ", the trainer's is ", graph::Quoted(spec.params[i])));
    }
    const std::string what = absl::StrCat("checkpoint parameter ", graph::Quoted(p.name()));
    auto value = Owned(p.value(), what);
    if (!value.ok()) return value.status();
    s.replica.params.push_back(*std::move(value));
    graph::HostTensor master;
    if (p.has_master()) {
      auto m = Owned(p.master(), what + " master");
      if (!m.ok()) return m.status();
      master = *std::move(m);
    }
    s.replica.masters.push_back(std::move(master));
    std::vector<graph::HostTensor> slots;
    for (int k = 0; k < p.optimizer_state_size(); ++k) {
      auto slot = Owned(p.optimizer_state(k), absl::StrCat(what, " optimizer state ", k));
      if (!slot.ok()) return slot.status();
      slots.push_back(*std::move(slot));
    }
    s.replica.state.push_back(std::move(slots));
  }
  for (int b = 0; b < c.buffers_size(); ++b) {
    const v1::TrainerCheckpoint::Buffer& buf = c.buffers(b);
    if (buf.name() != spec.buffers[b]) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint running statistic ", b, " is ",
                                                     graph::Quoted(buf.name()), ", the trainer's is ",
                                                     graph::Quoted(spec.buffers[b])));
    }
    auto value = Owned(buf.value(), absl::StrCat("checkpoint running statistic ", graph::Quoted(buf.name())));
    if (!value.ok()) return value.status();
    s.replica.buffers.push_back(*std::move(value));
  }
  return s;
}

}  // namespace npu::rpc
