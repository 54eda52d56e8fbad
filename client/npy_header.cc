#include "client/npy_header.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::client {
namespace {

// NumPy 2's NPY_MAXDIMS: a header's shape can hold no more, so a hostile one
// cannot grow a dims vector of a million entries from a 1 MiB header.
constexpr size_t kMaxNpyRank = 64;

// A cursor over the dict text; every Parse* returns false after recording why.
class DictParser {
 public:
  explicit DictParser(absl::string_view text) : text_(text) {}

  absl::Status Failed(absl::string_view what) {
    Fail(what);
    return error_;
  }

  absl::StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    if (!Expect('{')) return error_;
    SkipSpace();
    while (!AtEnd() && Peek() != '}') {
      std::string key;
      if (!ParseString(&key) || !Expect(':')) return error_;
      SkipSpace();
      if (key == "descr") {
        if (have_descr) return Failed("key 'descr' appears twice");
        if (Peek() == '[') {
          return Failed("structured dtypes (a list in 'descr') are not supported");
        }
        if (!ParseString(&header.descr)) return error_;
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) return Failed("key 'fortran_order' appears twice");
        if (!ParseBool(&header.fortran_order)) return error_;
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) return Failed("key 'shape' appears twice");
        if (!ParseShape(&header.shape)) return error_;
        have_shape = true;
      } else {
        return Failed(absl::StrCat("unexpected key '", key, "'"));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
      } else if (Peek() != '}') {
        return Failed("expected ',' or '}'");
      }
    }
    if (!Expect('}')) return error_;
    SkipSpace();
    if (!AtEnd()) return Failed("text after the closing '}'");
    if (!have_descr) return Failed("key 'descr' is missing");
    if (!have_order) return Failed("key 'fortran_order' is missing");
    if (!have_shape) return Failed("key 'shape' is missing");
    return header;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }

  // Records why parsing stopped; false, for `return Fail(...)` in bool parsers.
  bool Fail(absl::string_view what) {
    error_ = absl::InvalidArgumentError(
        absl::StrCat("malformed header at offset ", pos_, ": ", what));
    return false;
  }

  bool Expect(char c) {
    SkipSpace();
    if (Peek() != c) {
      return Fail(AtEnd() ? absl::StrCat("expected '", std::string(1, c), "', found the end")
                          : absl::StrCat("expected '", std::string(1, c), "'"));
    }
    ++pos_;
    return true;
  }

  bool ParseString(std::string* out) {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') {
      return Fail("expected a quoted string");
    }
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == absl::string_view::npos) {
      return Fail("unterminated string");
    }
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return true;
  }

  bool ParseBool(bool* out) {
    SkipSpace();
    for (auto [word, value] : {std::pair{absl::string_view("True"), true},
                               std::pair{absl::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        *out = value;
        return true;
      }
    }
    return Fail("expected True or False");
  }

  // "()", "(3,)", "(2, 3)"; Python 2 files may write "3L".
  bool ParseShape(std::vector<int64_t>* shape) {
    if (!Expect('(')) return false;
    SkipSpace();
    while (Peek() != ')') {
      const size_t start = pos_;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
      int64_t dim = 0;
      if (pos_ == start) {
        return Fail(Peek() == '-' ? "negative dimension in 'shape'"
                                  : "expected a dimension in 'shape'");
      }
      if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &dim)) {
        return Fail("dimension in 'shape' is too large");
      }
      if (Peek() == 'L') ++pos_;
      if (shape->size() == kMaxNpyRank) {
        return Fail(absl::StrCat("'shape' has more than ", kMaxNpyRank, " dimensions (NumPy's limit)"));
      }
      shape->push_back(dim);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
      } else if (Peek() != ')') {
        return Fail("expected ',' or ')' in 'shape'");
      }
    }
    ++pos_;
    return true;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<NpyHeader> ParseNpyHeaderDict(absl::string_view text) {
  return DictParser(text).Parse();
}

std::string FormatNpyHeaderDict(const NpyHeader& header) {
  // A 1-tuple needs its trailing comma, as Python writes it.
  std::string shape = absl::StrCat("(", absl::StrJoin(header.shape, ", "),
                                   header.shape.size() == 1 ? ",)" : ")");
  return absl::StrCat("{'descr': '", header.descr,
                      "', 'fortran_order': ", header.fortran_order ? "True" : "False",
                      ", 'shape': ", shape, ", }");
}

}  // namespace npu::client
