// msprobe's real-data comparison of one tensor, NPU against bench, for
// `npu compare` (docs/compare.md quotes each rule with its source). The
// metrics are msprobe's, computed on float64 copies of both sides:
//   Cosine          n.b / (|n| |b|); 1 when both are all zero (|x| <= eps),
//                   N/A when one is, unsupported for one element
//   EucDist         |n - b|
//   MaxAbsErr       max |n - b|
//   MaxRelativeErr  max |n - b| / |b|, where b = 0 both sides get eps added
//   One Thousandth Err Ratio / Five Thousandth Err Ratio
//                   the share of elements whose relative error is < 0.001 / 0.005
// Inf and NaN at the same positions on both sides are set to 0 first; at
// different positions nothing is computed and the row is an error.
//
// The verdict (Result):
//   error    shapes differ; inf/NaN positions differ; msprobe's accuracy check
//            fails: Cosine < 0.99 with MaxAbsErr > 0.001, or Cosine < 0.9, or
//            MaxAbsErr > 1 (a Cosine that is N/A fails it); or, against an
//            input of its node, the input's One Thousandth Err Ratio is > 0.9
//            and this output's < 0.6
//   warning  dtypes differ; or, against an input of its node, the output's
//            One Thousandth Err Ratio or Cosine is lower by more than 0.1, or
//            both MaxAbsErr exceed 1 and the output's is at least ten times
//            larger (msprobe's highlight rules)
//   pass     otherwise
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npu::client::cli {

// One side of a comparison: the tensor's values widened to float64.
struct ComparedTensor {
  std::string dtype;  // "float32", "float16", ...
  std::vector<int64_t> shape;
  std::vector<double> values;
};

enum class Verdict { kPass, kWarning, kError };
const char* VerdictName(Verdict v);  // "pass", "warning", "error"

struct TensorComparison {
  // A metric's value, or why there is none: "N/A" (msprobe's N/A: not
  // computable from these values) or "unsupported" (not defined for the shape).
  struct Metric {
    std::optional<double> value;
    std::string missing = "N/A";
    std::string Text() const;  // the CSV cell
  };
  Metric cosine, euc_dist, max_abs_err, max_relative_err, one_thousandth, five_thousandth;
  Verdict result = Verdict::kPass;
  std::string err_message;  // msprobe's messages, joined
};

// The per-tensor metrics and rules (the first two lines of the verdict above).
TensorComparison CompareTensors(const ComparedTensor& npu, const ComparedTensor& bench);

// The rules that judge an output against the inputs of its node (msprobe's
// highlight rules, the last clauses above): raises `output`'s verdict only.
void ApplyInputRules(const std::vector<const TensorComparison*>& inputs, TensorComparison& output);

}  // namespace npu::client::cli
