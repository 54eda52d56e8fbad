#include "server/http/http_content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/graph/bounded_text.h"

namespace npu::http {
namespace {

constexpr size_t kPiece = 64 * 1024;
constexpr size_t kMinCompressedBytes = 1024;

// Inflates `in` (gzip members one after another, or one zlib stream) into
// `out`, stopping once it would pass `limit`.
std::optional<HttpError> Inflate(const std::string& in, bool gzip, const HttpLimits& limits, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, gzip ? 15 + 16 : 15) != Z_OK) return HttpError{500, "zlib could not start inflating"};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t left = in.size();
  std::optional<HttpError> error;
  for (;;) {
    if (z.avail_in == 0 && left > 0) {
      z.avail_in = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
      left -= z.avail_in;
    }
    const size_t before = out.size();
    const size_t room = static_cast<size_t>(std::min<uint64_t>(kPiece, limits.max_body_bytes - out.size() + 1));
    out.resize(before + room);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.resize(before + room - z.avail_out);
    if (out.size() > limits.max_body_bytes) {
      error = HttpError{413, absl::StrCat("the request body inflates past the server's limit of ", BodyLimitText(limits))};
      break;
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && left == 0) break;
      // Another gzip member follows (RFC 1952 allows several); a zlib stream has one.
      if (!gzip || inflateReset(&z) != Z_OK) {
        error = HttpError{400, "bytes follow the end of the request body's compressed data"};
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
      error = HttpError{400, "the request body's compressed data is truncated"};
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = HttpError{400, absl::StrCat("the request body is not valid ", gzip ? "gzip" : "deflate (zlib)",
                                          " data", z.msg != nullptr ? absl::StrCat(": ", z.msg) : "")};
      break;
    }
  }
  inflateEnd(&z);
  return error;
}

}  // namespace

std::optional<HttpError> DecodeContentEncoding(HttpRequest& request, const HttpLimits& limits) {
  std::vector<std::string> codings;
  for (const HttpHeader& h : request.headers) {
    if (h.name != "content-encoding") continue;
    for (absl::string_view c : absl::StrSplit(h.value, ',')) {
      c = absl::StripAsciiWhitespace(c);
      if (!c.empty() && !absl::EqualsIgnoreCase(c, "identity")) codings.push_back(Lower(c));
    }
  }
  std::erase_if(request.headers, [](const HttpHeader& h) { return h.name == "content-encoding"; });
  if (codings.empty()) return std::nullopt;
  if (codings.size() > 1) {
    return HttpError{415, "the request body has more than one content coding; send one of gzip or deflate"};
  }
  const std::string& c = codings[0];
  const bool gzip = c == "gzip" || c == "x-gzip";
  if (!gzip && c != "deflate") {
    return HttpError{415, absl::StrCat("the content coding ", graph::Quoted(c), " is not served (gzip and deflate are)")};
  }
  std::string out;
  if (auto e = Inflate(request.body, gzip, limits, out)) return e;
  request.body = std::move(out);
  return std::nullopt;
}

bool AcceptsGzip(const HttpRequest& request) {
  bool gzip = false, star = false;
  for (const HttpHeader& h : request.headers) {
    if (h.name != "accept-encoding") continue;
    for (absl::string_view item : absl::StrSplit(h.value, ',')) {
      std::vector<absl::string_view> parts = absl::StrSplit(item, ';');
      const absl::string_view coding = absl::StripAsciiWhitespace(parts[0]);
      double q = 1.0;
      for (size_t i = 1; i < parts.size(); ++i) {
        absl::string_view p = absl::StripAsciiWhitespace(parts[i]);
        if (absl::StartsWithIgnoreCase(p, "q=") && !absl::SimpleAtod(p.substr(2), &q)) q = 0;
      }
      if (absl::EqualsIgnoreCase(coding, "gzip") || absl::EqualsIgnoreCase(coding, "x-gzip")) {
        if (q <= 0) return false;
        gzip = true;
      } else if (coding == "*") {
        star = q > 0;
      }
    }
  }
  return gzip || star;
}

void CompressResponse(const HttpRequest& request, HttpResponse& response) {
  if (response.body.size() < kMinCompressedBytes) return;
  const bool textual = absl::StartsWith(response.content_type, "application/json") ||
                       absl::StartsWith(response.content_type, "text/");
  if (!textual || !AcceptsGzip(request)) return;
  z_stream z{};
  // Level 1: a JSON tensor compresses well at the fastest level, and the
  // answer waits for it.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  std::string out(deflateBound(&z, response.body.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(response.body.data());
  z.avail_in = static_cast<uInt>(response.body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const bool ok = response.body.size() <= (size_t{1} << 31) && deflate(&z, Z_FINISH) == Z_STREAM_END;
  out.resize(z.total_out);
  deflateEnd(&z);
  if (!ok) return;
  response.body = std::move(out);
  response.SetHeader("Content-Encoding", "gzip");
  response.SetHeader("Vary", "Accept-Encoding");
}

}  // namespace npu::http
