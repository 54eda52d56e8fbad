// apex's mixed precision on a forward graph (training_forward.h's):
//   O0  nothing: fp32 throughout (the Cube still rounds its operands to fp16,
//       as an NPU does);
//   O1  each Cube op (MatMul, Gemm, Conv) casts its float inputs to fp16 and
//       its output back to fp32, the rest stays fp32 (apex's patched
//       functions, its whitelist being the GEMMs and convolutions);
//   O2  an fp16 model: the parameters, initializers, the floats the model
//       makes (Constant, ConstantOfShape, casts to FLOAT) and the input are
//       fp16 (apex's cast_model_type), except what BatchNormalization reads
//       (keep_batchnorm_fp32); the output is cast back to fp32 for the loss.
//       LayerNormalization's statistics and Softmax's sums stay fp32 inside
//       their ops (their fp32 accumulation, apex's fp32 list), and so does
//       F.normalize (ReduceL2 -> Clip -> [Expand] -> Div, cast to fp32 and
//       back: its 1e-12 is 0 in fp16); fp32 master weights in the optimizer;
//   O3  pure fp16: O2 with BatchNormalization's parameters fp16 too and no
//       master weights (the optimizer updates the fp16 weights, its state
//       fp16 as torch.optim keeps it for fp16 parameters); the running
//       statistics stay fp32.
// The backward pass differentiates through the casts, so gradients come out
// in each parameter's dtype.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "npu/v1/graph.pb.h"
#include "server/train/model_spec.h"
#include "server/train/train_config.h"

namespace npu::train {

// Applies `level` to `forward` (spec's model made into a forward, whose
// `data_inputs` are fp32 inputs and `float_outputs` its float outputs): at
// O2/O3 the data inputs are cast to fp16 inside and each float output is
// fp32 again under its own name. O2's fp16 parameters and constants are
// rounded in the float mode (`saturate`: the Ascend 910's saturation, else
// IEEE inf/NaN).
void ApplyAmp(AmpLevel level, const ModelSpec& spec, const std::vector<std::string>& data_inputs,
              const std::vector<std::string>& float_outputs, v1::Graph& forward, bool saturate);

// The dtype a parameter has in the model under `level` (its master copy,
// for O2, is fp32); also the dtype of its optimizer state at O3.
graph::DataType ModelDtype(AmpLevel level, const ModelSpec& spec, const std::string& param);

// Whether the optimizer keeps an fp32 master copy of the parameter (O2's fp16 ones).
bool HasMasters(AmpLevel level, const ModelSpec& spec, const std::string& param);

}  // namespace npu::train
