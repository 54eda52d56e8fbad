// 1-D convolution and pooling run as 2-D of height 1: a Conv, MaxPool,
// AveragePool or LpPool whose kernel_shape has one entry becomes Unsqueeze
// (axis 2 of its input, and of a Conv's weights) -> the same op with a unit
// first spatial axis in each attribute -> Squeeze, so the Cube's img2col and
// the Vector stencil, and the 2-D ops' gradients, serve nn.Conv1d and the 1-D
// pools unchanged. The node keeps its name; its outputs keep theirs.
#pragma once

#include "npu/v1/graph.pb.h"

namespace npu::graph {

// Rewrites `graph`'s 1-D convolutions and pools in place.
void PlanarizeOneDimensional(v1::Graph& graph);

}  // namespace npu::graph
