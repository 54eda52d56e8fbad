#include "server/graph/ops/einsum_equation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/graph/node_error.h"

namespace npu::graph::ops {
namespace {

constexpr int kLetters = 52;

int LetterId(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -1;
}

// One term's letters, and where its "..." stands (-1: none).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;  // the number of letters before it
};

absl::StatusOr<Term> ParseTerm(const v1::Node& node, const std::string& text, const std::string& what) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      if (t.ellipsis_at >= 0) return NodeError(node, "equation: ", what, " \"", text, "\" has \"...\" twice");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    const int id = LetterId(text[i]);
    if (id < 0) {
      return NodeError(node, "equation: ", what, " \"", text, "\" has '", std::string(1, text[i]),
                       "' (labels are letters a-z, A-Z, and \"...\")");
    }
    t.letters.push_back(id);
  }
  return t;
}

}  // namespace

bool EinsumEquation::In(int operand, int label) const {
  const auto& l = operands[static_cast<size_t>(operand)];
  return std::find(l.begin(), l.end(), label) != l.end();
}

bool EinsumEquation::InOutput(int label) const {
  return std::find(output.begin(), output.end(), label) != output.end();
}

absl::StatusOr<EinsumEquation> ParseEinsum(const v1::Node& node, const std::string& equation,
                                           const std::vector<Shape>& shapes) {
  std::string eq;
  for (char ch : equation) {
    if (ch != ' ') eq += ch;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size()) {
    return NodeError(node, "equation \"", equation, "\" has ", terms.size(), " operand terms for ", shapes.size(),
                     " inputs");
  }
  EinsumEquation e;
  int ellipsis_rank = 0;
  std::vector<Term> parsed;
  for (size_t k = 0; k < terms.size(); ++k) {
    auto t = ParseTerm(node, terms[k], absl::StrCat("operand ", k));
    if (!t.ok()) return t.status();
    const int rank = static_cast<int>(shapes[k].size()), letters = static_cast<int>(t->letters.size());
    if (t->ellipsis_at < 0 ? letters != rank : letters > rank) {
      return NodeError(node, "equation: operand ", k, " \"", terms[k], "\" has ", letters, " labels for ",
                       InputLabel(node, static_cast<int>(k)), " of rank ", rank);
    }
    if (t->ellipsis_at >= 0) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    parsed.push_back(*std::move(t));
  }
  e.size.assign(static_cast<size_t>(kLetters + ellipsis_rank), 0);
  e.used.assign(e.size.size(), false);
  // The labels of a term with its "..." dims as the last ellipsis labels (aligned from the right).
  auto expand = [&](const Term& t, int dims) {
    std::vector<int> labels(t.letters.begin(), t.letters.begin() + std::max(t.ellipsis_at, 0));
    for (int d = 0; d < dims; ++d) labels.push_back(kLetters + ellipsis_rank - dims + d);
    labels.insert(labels.end(), t.letters.begin() + std::max(t.ellipsis_at, 0), t.letters.end());
    return labels;
  };
  for (size_t k = 0; k < parsed.size(); ++k) {
    const int dims = parsed[k].ellipsis_at < 0 ? 0 : static_cast<int>(shapes[k].size() - parsed[k].letters.size());
    std::vector<int> labels = expand(parsed[k], dims);
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      if (std::count(labels.begin(), labels.end(), l) > 1) {
        return NodeError(node, "equation: operand ", k, " \"", terms[k], "\" repeats a label (a diagonal) ",
                         "is not supported");
      }
      const int64_t n = shapes[k][d];
      if (e.used[static_cast<size_t>(l)] && e.size[static_cast<size_t>(l)] != n) {
        return NodeError(node, "equation \"", equation, "\": ", l < kLetters ? "label" : "an ellipsis dim",
                         " of size ", e.size[static_cast<size_t>(l)], " and ", n, " in ",
                         InputLabel(node, static_cast<int>(k)), " (sizes must be equal; broadcasting is not supported)");
      }
      e.used[static_cast<size_t>(l)] = true;
      e.size[static_cast<size_t>(l)] = n;
    }
    e.operands.push_back(std::move(labels));
  }
  if (arrow == std::string::npos) {  // implicit: the ellipsis dims, then the labels used once, in ASCII order
    for (int d = 0; d < ellipsis_rank; ++d) e.output.push_back(kLetters + d);
    std::vector<char> once;
    for (const Term& t : parsed) {
      for (int l : t.letters) {
        int count = 0;
        for (const Term& u : parsed) count += static_cast<int>(std::count(u.letters.begin(), u.letters.end(), l));
        const char ch = static_cast<char>(l < 26 ? 'a' + l : 'A' + (l - 26));
        if (count == 1) once.push_back(ch);
      }
    }
    std::sort(once.begin(), once.end());
    for (char ch : once) e.output.push_back(LetterId(ch));
    return e;
  }
  auto out = ParseTerm(node, eq.substr(arrow + 2), "the output");
  if (!out.ok()) return out.status();
  e.output = expand(*out, out->ellipsis_at < 0 ? 0 : ellipsis_rank);
  for (int l : e.output) {
    if (std::count(e.output.begin(), e.output.end(), l) > 1) {
      return NodeError(node, "equation \"", equation, "\": the output repeats a label");
    }
    if (!e.used[static_cast<size_t>(l)]) {
      return NodeError(node, "equation \"", equation, "\": an output label is in no operand");
    }
  }
  if (out->ellipsis_at < 0 && ellipsis_rank > 0) {
    return NodeError(node, "equation \"", equation, "\": the output must keep the operands' \"...\"");
  }
  return e;
}

}  // namespace npu::graph::ops
