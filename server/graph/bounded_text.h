// Client-chosen text (node, value and graph names, ids, handles) quoted into
// error messages, bounded: a status message must fit the gRPC metadata a
// client accepts (8 KiB by default, after percent-encoding), or the client
// sees "metadata size exceeds limit" instead of the error. The full text is
// in the request, and the whole message in the server's request log.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace npu::graph {

// Longest name quoted in full; longer ones keep their first bytes.
inline constexpr size_t kMaxQuotedName = 128;

// `"name"`, or for a longer name `"first bytes..." (16384 bytes)`, cut at a
// UTF-8 character boundary so the message stays valid UTF-8.
std::string Quoted(absl::string_view name);

// `text` if its percent-encoded size (what gRPC sends: bytes outside printable
// ASCII, and '%', take 3) is at most `max_wire_bytes`; otherwise its head and
// tail with "... [N bytes elided] ..." between them, within the bound. The
// tail is kept because a message ends with the reason ("...: inner dimensions
// 4 and 8 differ"), the head because it names the culprit.
std::string BoundedMessage(absl::string_view text, size_t max_wire_bytes);

}  // namespace npu::graph
