// Compares a result with its reference within an op's tolerance: what the
// torch cases and the ONNX conformance cases share.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/fp16.h"
#include "server/graph/host_tensor.h"
#include "tests/graph/op_tolerance.h"

namespace npu::graph {

inline std::vector<double> AsDoubles(const HostTensor& t) {
  const int64_t n = t.type().elements();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type().dtype) {
      case v1::FLOAT16: v[i] = kernels::HalfToFloat(t.as<kernels::half_bits>()[i]); break;
      case v1::FLOAT32: v[i] = t.as<float>()[i]; break;
      case v1::INT32: v[i] = t.as<int32_t>()[i]; break;
      case v1::INT8: v[i] = t.as<int8_t>()[i]; break;
      case v1::BOOL: v[i] = t.as<uint8_t>()[i]; break;
      case v1::INT64: v[i] = static_cast<double>(t.as<int64_t>()[i]); break;
      default: break;
    }
  }
  return v;
}

// Empty when `got` equals `ref` (same type; elements within |got - ref| <=
// atol + rtol * |ref|, NaN matching NaN); otherwise the first few differences.
// Integer and BOOL results are exact whatever the op: integer arithmetic has
// one right answer (and int64 values past 2^53 would hide in a relative tolerance).
inline std::string CompareTensor(const HostTensor& got, const HostTensor& ref, const Tolerance& tol,
                                 const std::string& what) {
  std::ostringstream err;
  if (!(got.type() == ref.type())) {
    err << what << ": got " << ToString(got.type()) << ", reference " << ToString(ref.type());
    return err.str();
  }
  int bad = 0;
  const int64_t n = got.type().elements();
  if (got.type().dtype == v1::INT64) {  // doubles cannot hold every int64
    const int64_t* g = got.as<int64_t>();
    const int64_t* r = ref.as<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (g[i] != r[i] && bad++ < 3) err << what << "[" << i << "]: got " << g[i] << ", reference " << r[i] << "; ";
    }
    if (bad > 0) err << bad << " of " << n << " elements off (exact)";
    return err.str();
  }
  const bool half = got.type().dtype == v1::FLOAT16;
  const bool integral = !IsFloat(got.type().dtype);
  const double atol = integral ? 0 : half ? tol.atol16 : tol.atol32;
  const double rtol = integral ? 0 : half ? tol.rtol16 : tol.rtol32;
  const std::vector<double> g = AsDoubles(got), r = AsDoubles(ref);
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(r[i])) || g[i] == r[i] ||
                    std::fabs(g[i] - r[i]) <= atol + rtol * std::fabs(r[i]);
    if (!ok && bad++ < 3) err << what << "[" << i << "]: got " << g[i] << ", reference " << r[i] << "; ";
  }
  if (bad > 0) err << bad << " of " << g.size() << " elements off (atol " << atol << ", rtol " << rtol << ")";
  return err.str();
}

}  // namespace npu::graph
