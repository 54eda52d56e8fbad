#include "server/train/optimizer.h"

namespace npu::train {

int StateSlots(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return 0;
    case OptimizerKind::kMomentum: return 1;
    case OptimizerKind::kAdam: case OptimizerKind::kAdamW: return 2;
  }
  return 0;
}

const char* StateSlotName(OptimizerKind kind, int slot) {
  if (kind == OptimizerKind::kMomentum) return "velocity";
  return slot == 0 ? "exp_avg" : "exp_avg_sq";
}

const char* OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: return "adamw";
  }
  return "?";
}

std::vector<std::string> AppendUpdate(const OptimizerConfig& c, const std::string& master, const std::string& grad,
                                      const std::vector<std::string>& state, const UpdateScalars& s, GraphEditor& g) {
  const std::string base = "update/" + master;
  if (c.kind == OptimizerKind::kSgd || c.kind == OptimizerKind::kMomentum) {
    Attributes at{{"weight_decay", AttrFloat(static_cast<float>(c.weight_decay))}};
    std::vector<std::string> inputs = {master, grad, s.lr, s.grad_scale, s.found_inf};
    if (c.kind == OptimizerKind::kMomentum) {
      at["momentum"] = AttrFloat(static_cast<float>(c.momentum));
      at["nesterov"] = AttrInt(c.nesterov ? 1 : 0);
      inputs.push_back(state[0]);
    }
    return g.Add("SGDUpdate", inputs, 1 + StateSlots(c.kind), at, base);
  }
  const Attributes at{{"beta1", AttrFloat(static_cast<float>(c.beta1))},
                      {"beta2", AttrFloat(static_cast<float>(c.beta2))},
                      {"epsilon", AttrFloat(static_cast<float>(c.epsilon))},
                      {"weight_decay", AttrFloat(static_cast<float>(c.weight_decay))},
                      {"decoupled", AttrInt(c.kind == OptimizerKind::kAdamW ? 1 : 0)}};
  return g.Add("AdamUpdate", {master, grad, state[0], state[1], s.lr, s.grad_scale, s.found_inf, s.step}, 3, at, base);
}

}  // namespace npu::train
