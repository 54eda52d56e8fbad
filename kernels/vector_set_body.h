// The Vector kernel set of one ISA: include inside an anonymous namespace after
// defining `struct Isa` (see vector_kernels_avx512.cc for the operations it
// needs: fp32 lanes, masks, int32 lanes, and a double-precision `D`), then
// `constexpr VectorKernelSet k... = MakeVectorKernelSet(path);`.

#include "kernels/vector_math_body.h"
#include "kernels/vector_map_body.h"
#include "kernels/vector_rows_body.h"
#include "kernels/vector_stencil_body.h"

constexpr VectorKernelSet MakeVectorKernelSet(SimdPath path) {
  VectorKernelSet set;
  set.path = path;
  set.unary = UnaryKernel;
  set.binary = BinaryKernel;
  set.select = SelectKernel;
  set.widen = WidenKernel;
  set.narrow = NarrowKernel;
  set.convert = ConvertKernel;
  set.reduce = ReduceKernel;
  set.reduce_into = ReduceIntoKernel;
  set.moments = MomentsKernel;
  set.normalize = NormalizeKernel;
  set.affine = AffineKernel;
  set.softmax_row = SoftmaxRowKernel;
  set.softmax_columns = SoftmaxColumnsKernel;
  set.stencil = StencilKernel;
  set.pad_plane = PadPlaneKernel;
  return set;
}
