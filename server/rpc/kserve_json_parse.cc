#include "server/rpc/kserve_json_parse.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::rpc {
namespace {

using nlohmann::json;

constexpr size_t kExcerptBytes = 40;

// Appends `v` to `out` until `out` holds `budget` bytes. Each level writes a
// bracket before descending, so the recursion is no deeper than the budget.
void AppendExcerpt(const json& v, size_t budget, std::string& out) {
  if (out.size() >= budget) return;
  if (v.is_array() || v.is_object()) {
    const bool array = v.is_array();
    out.push_back(array ? '[' : '{');
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() < budget; ++it) {
      if (!first) out.push_back(',');
      first = false;
      if (!array) {
        AppendExcerpt(json(it.key()), budget, out);
        out.push_back(':');
      }
      AppendExcerpt(it.value(), budget, out);
    }
    if (out.size() < budget) out.push_back(array ? ']' : '}');
    return;
  }
  if (v.is_string()) {
    // Only the head of a long string is escaped; a cut UTF-8 sequence becomes U+FFFD.
    const std::string& s = v.get_ref<const std::string&>();
    out += json(s.substr(0, budget)).dump(-1, ' ', false, json::error_handler_t::replace);
    return;
  }
  out += v.dump();
}

}  // namespace

absl::Status CheckJsonBounds(absl::string_view text, const JsonLimits& limits) {
  int depth = 0;
  // Each comma and each opening bracket starts one more value: exact for
  // everything but an empty array or object, which counts as two.
  uint64_t values = text.empty() ? 0 : 1;
  auto too_many = [&](size_t at) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request's JSON holds more than ", limits.max_values, " values (at byte ", at,
                     "); send large tensors as binary data (the \"binary_data_size\" parameter)"));
  };
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return absl::InvalidArgumentError(absl::StrCat("the request's JSON nests ", c == '[' ? "arrays" : "objects",
                                                         " deeper than ", limits.max_depth, " levels (at byte ", i,
                                                         ")"));
        }
        if (++values > limits.max_values) return too_many(i);
        break;
      case ']':
      case '}':
        if (--depth < 0) return absl::OkStatus();  // not JSON: the parser says so
        break;
      case ',':
        if (++values > limits.max_values) return too_many(i);
        break;
      default: break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<json> ParseClientJson(absl::string_view text, const JsonLimits& limits) {
  if (auto s = CheckJsonBounds(text, limits); !s.ok()) return s;
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // The parser ends its message with the token it last read, which can be
    // the whole body (an unterminated string): quote that token bounded.
    const absl::string_view what = e.what();
    constexpr absl::string_view kLastRead = "; last read: '";
    const size_t at = what.find(kLastRead);
    if (at == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          graph::BoundedMessage(absl::StrCat("the request body is not valid JSON: ", what), 512));
    }
    absl::string_view token = what.substr(at + kLastRead.size());
    if (absl::EndsWith(token, "'")) token.remove_suffix(1);
    return absl::InvalidArgumentError(absl::StrCat("the request body is not valid JSON: ", what.substr(0, at),
                                                   "; last read: ", graph::Quoted(token)));
  }
}

std::string JsonExcerpt(const json& v) {
  // One byte past the bound tells a value that fits from one that was cut.
  std::string s;
  AppendExcerpt(v, kExcerptBytes + 1, s);
  if (s.size() > kExcerptBytes) {
    size_t n = kExcerptBytes - 3;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 character
    s.resize(n);
    s += "...";
  }
  return s;
}

}  // namespace npu::rpc
