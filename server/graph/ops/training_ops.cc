// The ops of training graphs (server/train/ builds them): the gradients of
// the forward ops, the losses, dropout with a per-step seed, the optimizer
// updates and the float status. Each is an op like any other: planned,
// counted and profiled on the units that run it.
#include "server/graph/ops/builtin_ops.h"

namespace npu::graph::ops {

void RegisterActivationGradOps(OpRegistry& r);  // ReluGrad, SigmoidGrad, TanhGrad, LeakyReluGrad, GeluGrad
void RegisterSoftmaxGradOps(OpRegistry& r);     // SoftmaxGrad, LogSoftmaxGrad
void RegisterNormGradOps(OpRegistry& r);        // LayerNormalizationGrad, BatchNormalizationGrad
void RegisterPoolGradOps(OpRegistry& r);        // MaxPoolGrad, AveragePoolGrad, LpPoolGrad
void RegisterConvGradOp(OpRegistry& r);         // ConvGrad
void RegisterLstmGradOp(OpRegistry& r);         // LSTMGrad
void RegisterGruGradOp(OpRegistry& r);          // GRUGrad
void RegisterGatherGradOp(OpRegistry& r);       // GatherGrad
void RegisterDropoutOps(OpRegistry& r);         // SeededDropout, DropoutGrad
void RegisterLossOps(OpRegistry& r);            // SoftmaxCrossEntropyLoss(+Grad)
void RegisterOptimizerOps(OpRegistry& r);       // SGDUpdate, AdamUpdate
void RegisterFloatStatusOp(OpRegistry& r);      // NPUGetFloatStatus
void RegisterHcclAllReduceOp(OpRegistry& r);    // HcclAllReduce

void RegisterTrainingOps(OpRegistry& r) {
  RegisterActivationGradOps(r);
  RegisterSoftmaxGradOps(r);
  RegisterNormGradOps(r);
  RegisterPoolGradOps(r);
  RegisterConvGradOp(r);
  RegisterLstmGradOp(r);
  RegisterGruGradOp(r);
  RegisterGatherGradOp(r);
  RegisterDropoutOps(r);
  RegisterLossOps(r);
  RegisterOptimizerOps(r);
  RegisterFloatStatusOp(r);
  RegisterHcclAllReduceOp(r);
}

}  // namespace npu::graph::ops
