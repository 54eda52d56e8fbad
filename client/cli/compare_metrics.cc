#include "client/cli/compare_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npu::client::cli {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();  // msprobe's FLOAT_EPSILON

// msprobe's thresholds (CompareConst).
constexpr double kCosThreshold = 0.99, kMaxAbsErrThreshold = 0.001;       // both: not reached
constexpr double kCosMaxThreshold = 0.9, kMaxAbsErrMaxThreshold = 1.0;    // either: not reached
constexpr double kThousandth = 0.001, kFiveThousandth = 0.005;            // the ratios' relative errors
constexpr double kRatioInRed = 0.9, kRatioOutRed = 0.6, kRatioDropYellow = 0.1;
constexpr double kCosineDropYellow = 0.1, kMagnitudeYellow = 1.0;

void Raise(TensorComparison& c, Verdict v) { c.result = std::max(c.result, v); }

void Note(TensorComparison& c, const std::string& message) {
  if (!c.err_message.empty()) c.err_message += " ";
  c.err_message += message;
}

TensorComparison::Metric Value(double v) { return {v, ""}; }
TensorComparison::Metric Missing(const char* why) { return {std::nullopt, why}; }

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kWarning: return "warning";
    case Verdict::kError: return "error";
  }
  return "error";
}

std::string TensorComparison::Metric::Text() const {
  return value.has_value() ? absl::StrFormat("%.6g", *value) : missing;
}

TensorComparison CompareTensors(const ComparedTensor& npu, const ComparedTensor& bench) {
  TensorComparison c;
  if (npu.shape != bench.shape || npu.values.size() != bench.values.size()) {
    Note(c, "Shape of NPU and bench tensor do not match. Skipped.");
    c.result = Verdict::kError;
    return c;
  }
  if (npu.values.empty()) {
    Note(c, "This is empty data, can not compare.");
    return c;
  }
  std::vector<double> n = npu.values, b = bench.values;
  for (size_t i = 0; i < n.size(); ++i) {
    const bool n_bad = !std::isfinite(n[i]), b_bad = !std::isfinite(b[i]);
    if (n_bad != b_bad || (n_bad && std::isnan(n[i]) != std::isnan(b[i]))) {
      Note(c, "The position of inf or nan in NPU and bench Tensor do not match.");
      c.result = Verdict::kError;
      return c;
    }
    if (n_bad) n[i] = b[i] = 0.0;
  }
  if (npu.dtype != bench.dtype) {
    Note(c, "Dtype of NPU and bench tensor do not match.");
    Raise(c, Verdict::kWarning);
  }
  const bool scalar = npu.shape.empty();
  double dot = 0, nn = 0, bb = 0, sq = 0, max_abs = 0, max_rel = 0;
  size_t within1 = 0, within5 = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    dot += n[i] * b[i];
    nn += n[i] * n[i];
    bb += b[i] * b[i];
    const double d = n[i] - b[i];
    sq += d * d;
    max_abs = std::max(max_abs, std::abs(d));
    const double rel = b[i] == 0.0 ? std::abs((n[i] + kEps - kEps) / kEps) : std::abs(d / b[i]);
    max_rel = std::max(max_rel, rel);
    within1 += rel < kThousandth ? 1 : 0;
    within5 += rel < kFiveThousandth ? 1 : 0;
  }
  c.max_abs_err = Value(max_abs);
  c.max_relative_err = Value(max_rel);
  if (scalar) {
    Note(c, "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
            "'Five Thousandth Err Ratio'.");
    c.cosine = c.euc_dist = c.one_thousandth = c.five_thousandth = Missing("unsupported");
  } else {
    c.euc_dist = Value(std::sqrt(sq));
    c.one_thousandth = Value(static_cast<double>(within1) / static_cast<double>(n.size()));
    c.five_thousandth = Value(static_cast<double>(within5) / static_cast<double>(n.size()));
    const double na = std::sqrt(nn), nb = std::sqrt(bb);
    if (n.size() == 1) {
      c.cosine = Missing("unsupported");
      Note(c, "This is a 1-d tensor of length 1.");
    } else if (na <= kEps && nb <= kEps) {
      c.cosine = Value(1.0);
    } else if (na <= kEps) {
      Note(c, "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.");
    } else if (nb <= kEps) {
      Note(c, "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.");
    } else {
      c.cosine = Value(dot / (na * nb));
    }
  }
  // msprobe's accuracy check; a Cosine that is N/A fails it, one that is
  // unsupported (a single element) leaves MaxAbsErr to decide.
  const bool cos_na = !c.cosine.value.has_value() && c.cosine.missing == "N/A";
  const double cos = c.cosine.value.value_or(1.0);
  if (cos_na || (cos < kCosThreshold && max_abs > kMaxAbsErrThreshold) || cos < kCosMaxThreshold ||
      max_abs > kMaxAbsErrMaxThreshold) {
    Raise(c, Verdict::kError);
  }
  return c;
}

void ApplyInputRules(const std::vector<const TensorComparison*>& inputs, TensorComparison& out) {
  for (const TensorComparison* in : inputs) {
    if (in->one_thousandth.value && out.one_thousandth.value) {
      const double a = *in->one_thousandth.value, b = *out.one_thousandth.value;
      if (a > kRatioInRed && b < kRatioOutRed) {
        Raise(out, Verdict::kError);
        Note(out, "The input's One Thousandth Err Ratio exceeds 0.9, while the output's is below 0.6.");
      } else if (a - b > kRatioDropYellow) {
        Raise(out, Verdict::kWarning);
        Note(out, "The output's One Thousandth Err Ratio is lower than the input's by more than 0.1.");
      }
    }
    if (in->cosine.value && out.cosine.value && *in->cosine.value - *out.cosine.value > kCosineDropYellow) {
      Raise(out, Verdict::kWarning);
      Note(out, "The output's Cosine is lower than the input's by more than 0.1.");
    }
    if (in->max_abs_err.value && out.max_abs_err.value && *in->max_abs_err.value > 1.0 &&
        *out.max_abs_err.value > 1.0 &&
        std::log10(*out.max_abs_err.value) - std::log10(*in->max_abs_err.value) >= kMagnitudeYellow) {
      Raise(out, Verdict::kWarning);
      Note(out, "The MaxAbsErr of input and output both exceed 1, the output's by an order of magnitude more.");
    }
  }
}

}  // namespace npu::client::cli
