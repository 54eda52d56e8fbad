#include "fuzz/http_case.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "server/http/http_content_coding.h"
#include "server/http/http_request_reader.h"

namespace npu::fuzz {
namespace {

using http::HttpLimits;
using http::HttpRequestReader;
using Event = HttpRequestReader::Event;

// Small limits, so a case reaches them quickly.
HttpLimits Limits() {
  HttpLimits l;
  l.max_target_bytes = 256;
  l.max_header_fields = 16;
  l.max_header_bytes = 2048;
  l.max_body_bytes = 4096;
  return l;
}

std::string Gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Body(ChoiceSource& src) {
  const size_t n = src.Chance(10) ? 4000 + src.Below(200) : src.Below(64);
  std::string b(n, 'b');
  for (char& c : b) c = static_cast<char>(src.Below(256));
  return b;
}

std::string RequestLine(ChoiceSource& src) {
  static const std::vector<std::string> methods = {"GET", "POST", "HEAD", "OPTIONS", "PUT", "G(T", "", "get"};
  static const std::vector<std::string> targets = {
      "/", "/v2/models/m/infer", "/a%20b?x=1", "/a%zz", "*", "http://h:1/p?q", "ftp://x/", "/a#b", "/\x01", ""};
  static const std::vector<std::string> versions = {"HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "http/1.1", ""};
  std::string target = src.Pick(targets);
  if (src.Chance(5)) target = "/" + std::string(200 + src.Below(100), 'a');
  std::string sep = src.Chance(5) ? "  " : " ";
  std::string line = src.Pick(methods) + sep + target + " " + src.Pick(versions);
  return line + (src.Chance(90) ? "\r\n" : src.Chance(50) ? "\n" : "\r\r\n");
}

// One request: head and body, hostile or not.
std::string Request(ChoiceSource& src) {
  std::string r = src.Chance(5) ? "\r\n" : "";
  r += RequestLine(src);
  std::string body = Body(src);
  const bool gzip = src.Chance(15);
  if (gzip) body = src.Chance(30) ? Gzip(std::string(5000 + src.Below(5000), ' ')) : Gzip(body);
  const int framing = static_cast<int>(src.Below(6));  // none, CL, chunked, CL+chunked, conflicting CL, bad CL
  if (src.Chance(90)) r += "Host: h\r\n";
  if (src.Chance(5)) r += "Host: second\r\n";
  if (gzip) r += "Content-Encoding: gzip\r\n";
  if (src.Chance(5)) r += "Content-Encoding: br\r\n";
  if (src.Chance(5)) r += "Expect: 100-continue\r\n";
  if (src.Chance(3)) r += "Expect: magic\r\n";
  if (src.Chance(5)) r += "Connection: close\r\n";
  if (src.Chance(5)) r += "X: folded\r\n continued\r\n";
  if (src.Chance(5)) r += "Bad Name : v\r\n";
  if (src.Chance(3)) r += std::string("X: a\0b\r\n", 8);
  if (src.Chance(5)) {
    for (uint64_t i = 0, n = src.Below(30); i < n; ++i) r += absl::StrCat("X-", i, ": v\r\n");
  }
  if (src.Chance(3)) r += "X-Long: " + std::string(2100, 'v') + "\r\n";
  std::string chunked;
  if (framing == 2 || framing == 3) {
    size_t at = 0;
    while (at < body.size()) {
      const size_t n = std::min<size_t>(body.size() - at, 1 + src.Below(40));
      chunked += absl::StrCat(src.Chance(3) ? "zz" : absl::StrCat(absl::Hex(n)), src.Chance(10) ? ";ext=1" : "",
                              "\r\n", body.substr(at, n), src.Chance(3) ? "" : "\r\n");
      at += n;
    }
    chunked += src.Chance(5) ? "ffffffffffffffffffff\r\n" : "0\r\n";
    if (src.Chance(10)) chunked += "Trailer: t\r\n";
    chunked += "\r\n";
  }
  switch (framing) {
    case 1: r += absl::StrCat("Content-Length: ", body.size(), "\r\n\r\n", body); break;
    case 2:
      r += absl::StrCat("Transfer-Encoding: ", src.Chance(10) ? "gzip, chunked" : "chunked", "\r\n\r\n", chunked);
      break;
    case 3: r += absl::StrCat("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", chunked); break;
    case 4: r += absl::StrCat("Content-Length: ", body.size(), "\r\nContent-Length: ", body.size() + 1, "\r\n\r\n", body); break;
    case 5: r += absl::StrCat("Content-Length: ", src.Chance(50) ? "-1" : "1e3", "\r\n\r\n", body); break;
    default: r += "\r\n"; break;
  }
  return r;
}

struct Outcome {
  std::vector<std::string> requests;  // method, path, body size and a hash of each
  int error = 0;                      // the refusal's status, 0 for none
  bool ended = false;
  std::string finding;
};

Outcome Read(const std::string& bytes, const std::vector<size_t>& splits) {
  const HttpLimits limits = Limits();
  HttpRequestReader reader(limits);
  Outcome out;
  size_t at = 0, piece = 0;
  for (int steps = 0; steps < 100000; ++steps) {
    switch (reader.Next()) {
      case Event::kNeedInput:
        if (at < bytes.size()) {
          const size_t n = splits.empty() ? bytes.size() : std::max<size_t>(1, splits[piece++ % splits.size()]);
          reader.Append(absl::string_view(bytes).substr(at, n));
          at += std::min(n, bytes.size() - at);
        } else {
          reader.EndOfInput();
        }
        continue;
      case Event::kHead: continue;
      case Event::kRequest: {
        http::HttpRequest r = reader.TakeRequest();
        if (r.body.size() > limits.max_body_bytes) out.finding = absl::StrCat("a body of ", r.body.size(), " bytes");
        const std::string head = absl::StrCat(r.method, " ", r.path, " ", r.body.size(), " ",
                                              std::hash<std::string>{}(r.body));
        if (auto e = http::DecodeContentEncoding(r, limits); !e) {
          if (r.body.size() > limits.max_body_bytes) out.finding = "a decoded body past the limit";
        } else if (e->status != 400 && e->status != 413 && e->status != 415) {
          out.finding = absl::StrCat("content decoding answered ", e->status);
        }
        out.requests.push_back(head);
        if (!out.finding.empty()) return out;
        continue;
      }
      case Event::kError: {
        out.error = reader.error().status;
        static const int kStatuses[] = {400, 413, 414, 417, 431, 501, 505};
        if (std::find(std::begin(kStatuses), std::end(kStatuses), out.error) == std::end(kStatuses)) {
          out.finding = absl::StrCat("the reader refused with ", out.error, ": ", reader.error().message);
        }
        if (reader.Next() != Event::kError) out.finding = "an event after a refusal";
        return out;
      }
      case Event::kEnd: out.ended = true; return out;
    }
  }
  out.finding = "the reader did not finish";
  return out;
}

}  // namespace

HttpStream GenerateHttpStream(ChoiceSource& src) {
  HttpStream s;
  for (uint64_t i = 0, n = 1 + src.Below(4); i < n; ++i) s.bytes += Request(src);
  if (src.Chance(10)) s.bytes.resize(src.Below(s.bytes.size() + 1));  // cut anywhere
  for (uint64_t i = 0, n = 1 + src.Below(8); i < n; ++i) s.splits.push_back(1 + src.Below(src.Chance(50) ? 8 : 600));
  return s;
}

std::string CheckHttpStream(const HttpStream& stream) {
  const Outcome whole = Read(stream.bytes, {});
  if (!whole.finding.empty()) return whole.finding;
  const Outcome split = Read(stream.bytes, stream.splits);
  if (!split.finding.empty()) return split.finding;
  if (whole.requests != split.requests || whole.error != split.error || whole.ended != split.ended) {
    return absl::StrCat("the stream read whole gave ", whole.requests.size(), " requests and status ", whole.error,
                        "; in pieces ", split.requests.size(), " and status ", split.error);
  }
  return "";
}

}  // namespace npu::fuzz
