#include "server/graph/bounded_text.h"

#include "absl/strings/str_cat.h"

namespace npu::graph {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// gRPC percent-encodes a status message: printable ASCII but '%' goes as is.
size_t WireSize(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u >= 0x20 && u <= 0x7E && u != '%' ? 1 : 3;
}

// The longest prefix of `text` whose wire size is at most `budget`, ending on
// a character boundary.
absl::string_view Head(absl::string_view text, size_t budget) {
  size_t used = 0, end = 0;
  while (end < text.size() && used + WireSize(text[end]) <= budget) used += WireSize(text[end++]);
  while (end > 0 && end < text.size() && IsContinuation(text[end])) --end;
  return text.substr(0, end);
}

// The longest suffix within `budget`, starting on a character boundary.
absl::string_view Tail(absl::string_view text, size_t budget) {
  size_t used = 0, begin = text.size();
  while (begin > 0 && used + WireSize(text[begin - 1]) <= budget) used += WireSize(text[--begin]);
  while (begin < text.size() && IsContinuation(text[begin])) ++begin;
  return text.substr(begin);
}

size_t WireSize(absl::string_view text) {
  size_t n = 0;
  for (char c : text) n += WireSize(c);
  return n;
}

}  // namespace

std::string Quoted(absl::string_view name) {
  if (name.size() <= kMaxQuotedName) return absl::StrCat("\"", name, "\"");
  return absl::StrCat("\"", Head(name, kMaxQuotedName), "...\" (", name.size(), " bytes)");
}

std::string BoundedMessage(absl::string_view text, size_t max_wire_bytes) {
  if (WireSize(text) <= max_wire_bytes) return std::string(text);
  const std::string marker =
      absl::StrCat(" ... [cut: the message has ", text.size(), " bytes; the server log has all of it] ... ");
  if (marker.size() >= max_wire_bytes) return std::string(Head(text, max_wire_bytes));
  const size_t room = max_wire_bytes - marker.size();
  const absl::string_view head = Head(text, room / 2);
  const absl::string_view tail = Tail(text.substr(head.size()), room - WireSize(head));
  return absl::StrCat(head, marker, tail);
}

}  // namespace npu::graph
