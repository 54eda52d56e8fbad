// What the docs say about gradients, generated from the rules: docs/ops.md's
// "gradient" column and docs/training.md's list of the ops with one
// (npu-ops-doc prints both; tests/train/gradient_docs_test.cc holds the docs
// equal to them).
#pragma once

#include <string>

#include "server/graph/ops_doc.h"

namespace npu::train {

// "yes" where the op has a gradient rule, "zero" where the rule passes a zero
// gradient (Floor, ...), "-" where it has none.
graph::OpsTableColumn GradientColumn();

// The ops with a gradient rule, in name order, as one Markdown paragraph (the
// flat ones last, as such).
std::string GradientOpsMarkdown();

}  // namespace npu::train
