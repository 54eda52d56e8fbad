#include "server/http/http_request_reader.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/graph/bounded_text.h"

namespace npu::http {
namespace {

constexpr size_t kRequestLineSlack = 256;  // method, spaces and version around the target
constexpr size_t kMaxChunkLine = 4096;     // a chunk size with its extensions
constexpr int kMaxBlankLines = 4;          // before a request line (RFC 9112 §2.2)
constexpr uint64_t kBodyReserve = uint64_t{64} << 20;

// tchar (RFC 9110 §5.6.2).
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || absl::StrContains("!#$%&'*+-.^_`|~", c);
}

bool IsToken(absl::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar); }

// A field value's characters: visible, SP, HTAB and obs-text; no CR, LF, NUL or other controls.
bool IsFieldValue(absl::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t') || u == 0x7f;
  });
}

absl::string_view TrimWhitespace(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool PercentDecode(absl::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

// uri-host [":" port] (RFC 9110 §7.2): reg-name, IPv4 or a bracketed IP literal.
bool IsHostValue(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || absl::StrContains("-._~%!$&'()*+,;=:[]", c);
  });
}

// The comma-separated elements of every field named `name`, trimmed, empty ones dropped.
std::vector<std::string> ListElements(const HttpRequest& r, absl::string_view name) {
  std::vector<std::string> out;
  for (const HttpHeader& h : r.headers) {
    if (h.name != name) continue;
    for (absl::string_view e : absl::StrSplit(h.value, ',')) {
      e = TrimWhitespace(e);
      if (!e.empty()) out.emplace_back(e);
    }
  }
  return out;
}

}  // namespace

void HttpRequestReader::Append(absl::string_view bytes) {
  Compact();
  buffer_.append(bytes.data(), bytes.size());
}

void HttpRequestReader::Compact() {
  if (pos_ == buffer_.size()) {
    // A large request's buffer is not kept while the connection waits for the next one.
    if (buffer_.capacity() > (size_t{1} << 20)) {
      std::string().swap(buffer_);
    } else {
      buffer_.clear();
    }
    pos_ = 0;
  } else if (pos_ > (size_t{64} << 10)) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
}

std::string BodyLimitText(const HttpLimits& limits) {
  return absl::StrCat(limits.max_body_bytes, " bytes",
                      limits.body_limit_name.empty() ? "" : absl::StrCat(" (", limits.body_limit_name, ")"));
}

HttpRequestReader::Event HttpRequestReader::Fail(int status, std::string message) {
  state_ = State::kFailed;
  error_ = {status, std::move(message)};
  keep_alive_ = false;
  return Event::kError;
}

bool HttpRequestReader::Refuse(int status, std::string message) {
  Fail(status, std::move(message));
  return false;
}

HttpRequestReader::Line HttpRequestReader::TakeLine(size_t max, absl::string_view* line, bool head) {
  const size_t avail = buffer_.size() - pos_;
  const size_t nl = buffer_.find('\n', pos_ + scanned_);
  if (nl == std::string::npos) {
    scanned_ = avail;
    // A last CR may be the line's CRLF half-read: it is not the line's.
    const size_t line = avail > 0 && buffer_.back() == '\r' ? avail - 1 : avail;
    return line > max ? Line::kTooLong : Line::kNeedMore;
  }
  size_t end = nl;
  if (end > pos_ && buffer_[end - 1] == '\r') --end;
  if (end - pos_ > max) return Line::kTooLong;
  *line = absl::string_view(buffer_).substr(pos_, end - pos_);
  if (head) head_bytes_ += nl + 1 - pos_;
  pos_ = nl + 1;
  scanned_ = 0;
  return Line::kOk;
}

HttpRequestReader::Event HttpRequestReader::Next() {
  auto need_more = [this] {
    return eof_ ? Fail(400, "the connection ended in the middle of a request") : Event::kNeedInput;
  };
  for (;;) {
    absl::string_view line;
    switch (state_) {
      case State::kRequestLine: {
        if (eof_ && pos_ == buffer_.size()) return Event::kEnd;
        const Line r = TakeLine(limits_.max_target_bytes + kRequestLineSlack, &line, /*head=*/true);
        if (r == Line::kNeedMore) return need_more();
        if (r == Line::kTooLong) {
          return Fail(414, absl::StrCat("the request line is longer than the request-target limit of ",
                                        limits_.max_target_bytes, " bytes"));
        }
        if (line.empty()) {
          head_bytes_ = 0;  // not part of the request
          if (++blank_lines_ > kMaxBlankLines) return Fail(400, "empty lines where a request line belongs");
          continue;
        }
        if (!ParseRequestLine(line)) return Event::kError;
        state_ = State::kFields;
        continue;
      }
      case State::kFields:
      case State::kTrailers: {
        const bool trailer = state_ == State::kTrailers;
        const size_t budget = limits_.max_header_bytes > head_bytes_ ? limits_.max_header_bytes - head_bytes_ : 0;
        const Line r = TakeLine(budget, &line, /*head=*/true);
        if (r == Line::kNeedMore) return need_more();
        if (r == Line::kTooLong || head_bytes_ > limits_.max_header_bytes) {
          return Fail(431, absl::StrCat("the request's ", trailer ? "trailer" : "header", " section is larger than ",
                                        limits_.max_header_bytes, " bytes"));
        }
        if (line.empty()) {
          if (trailer) {
            state_ = State::kComplete;
            continue;
          }
          return EndOfHead();
        }
        if (!ParseField(line, trailer)) return Event::kError;
        continue;
      }
      case State::kLengthBody:
        TakeBody();
        if (remaining_ > 0) return need_more();
        state_ = State::kComplete;
        continue;
      case State::kChunkSize: {
        const Line r = TakeLine(kMaxChunkLine, &line, /*head=*/false);
        if (r == Line::kNeedMore) return need_more();
        if (r == Line::kTooLong) return Fail(400, absl::StrCat("a chunk size line is longer than ", kMaxChunkLine, " bytes"));
        if (!ParseChunkSize(line)) return Event::kError;
        continue;
      }
      case State::kChunkData:
        TakeBody();
        if (remaining_ > 0) return need_more();
        state_ = State::kChunkDataEnd;
        continue;
      case State::kChunkDataEnd: {
        const size_t avail = buffer_.size() - pos_;
        if (avail == 0 || (buffer_[pos_] == '\r' && avail == 1)) return need_more();
        if (buffer_[pos_] == '\n') {
          pos_ += 1;
        } else if (buffer_[pos_] == '\r' && buffer_[pos_ + 1] == '\n') {
          pos_ += 2;
        } else {
          return Fail(400, "a chunk's data is not followed by CRLF (its size is wrong)");
        }
        state_ = State::kChunkSize;
        continue;
      }
      case State::kComplete: return Event::kRequest;
      case State::kFailed: return Event::kError;
    }
  }
}

bool HttpRequestReader::ParseRequestLine(absl::string_view line) {
  if (absl::StrContains(line, '\r')) return Refuse(400, "a bare CR in the request line");
  const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty()) {
    return Refuse(400, "the request line is not METHOD SP TARGET SP HTTP-VERSION");
  }
  const absl::string_view method = parts[0], target = parts[1], version = parts[2];
  if (!IsToken(method)) return Refuse(400, absl::StrCat("the method ", graph::Quoted(method), " is not a token"));
  if (target.size() > limits_.max_target_bytes) {
    return Refuse(414, absl::StrCat("the request-target is ", target.size(), " bytes; the limit is ",
                                  limits_.max_target_bytes));
  }
  if (version.size() != 8 || !absl::StartsWith(version, "HTTP/") || !absl::ascii_isdigit(version[5]) ||
      version[6] != '.' || !absl::ascii_isdigit(version[7])) {
    return Refuse(400, absl::StrCat("the request line's version ", graph::Quoted(version), " is not HTTP/x.y"));
  }
  if (version[5] != '1') {
    return Refuse(505, absl::StrCat(version, " is not served; this server speaks HTTP/1.1 (and 1.0)"));
  }
  request_.method = std::string(method);
  request_.minor_version = version[7] == '0' ? 0 : 1;
  request_.target = std::string(target);
  keep_alive_ = request_.minor_version == 1;

  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '#') {
      return Refuse(400, "the request-target holds a character a URI may not (a space, control, '#' or non-ASCII byte)");
    }
  }
  absl::string_view path_and_query = target;
  if (target == "*") {
    if (method != "OPTIONS") return Refuse(400, "the request-target * is only for OPTIONS");
  } else if (target[0] != '/') {
    // absolute-form: scheme "://" authority path-abempty ["?" query]
    const size_t scheme_end = target.find("://");
    if (scheme_end == absl::string_view::npos ||
        !(absl::EqualsIgnoreCase(target.substr(0, scheme_end), "http") ||
          absl::EqualsIgnoreCase(target.substr(0, scheme_end), "https"))) {
      return Refuse(400, "the request-target is neither a path (origin-form) nor an http(s) URI (absolute-form)");
    }
    const size_t path_start = target.find_first_of("/?", scheme_end + 3);
    path_and_query = path_start == absl::string_view::npos ? "/" : target.substr(path_start);
  }
  const size_t q = path_and_query.find('?');
  absl::string_view path = path_and_query.substr(0, q);
  if (path.empty()) path = "/";
  if (q != absl::string_view::npos) request_.query = std::string(path_and_query.substr(q + 1));
  if (target != "*" && !PercentDecode(path, &request_.path)) {
    return Refuse(400, "the request-target's path has a '%' not followed by two hex digits");
  }
  if (target == "*") request_.path = "*";
  return true;
}

bool HttpRequestReader::ParseField(absl::string_view line, bool trailer) {
  if (line[0] == ' ' || line[0] == '\t') {
    return Refuse(400, "a field line starts with whitespace (obsolete line folding is not accepted)");
  }
  if (++fields_ > limits_.max_header_fields) {
    return Refuse(431, absl::StrCat("the request has more than ", limits_.max_header_fields, " header and trailer fields"));
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return Refuse(400, "a field line without a colon");
  const absl::string_view name = line.substr(0, colon);
  if (!name.empty() && (name.back() == ' ' || name.back() == '\t')) {
    return Refuse(400, absl::StrCat("whitespace between the field name ", graph::Quoted(TrimWhitespace(name)),
                                  " and its colon"));
  }
  if (!IsToken(name)) return Refuse(400, absl::StrCat("the field name ", graph::Quoted(name), " is not a token"));
  const absl::string_view value = TrimWhitespace(line.substr(colon + 1));
  if (!IsFieldValue(value)) {
    return Refuse(400, absl::StrCat("the field ", graph::Quoted(name), " holds a control character (CR, LF, NUL, ...)"));
  }
  // Trailers are read and checked, then dropped: no handler asks for one, and
  // framing fields must not arrive after the body.
  if (!trailer) request_.headers.push_back({Lower(name), std::string(value)});
  return true;
}

HttpRequestReader::Event HttpRequestReader::EndOfHead() {
  const HttpRequest& r = request_;
  if (r.minor_version == 1) {
    int hosts = 0;
    for (const HttpHeader& h : r.headers) hosts += h.name == "host";
    if (hosts != 1) return Fail(400, absl::StrCat("an HTTP/1.1 request needs one Host field; it has ", hosts));
  }
  if (const std::string* host = r.Header("host"); host != nullptr && !IsHostValue(*host)) {
    return Fail(400, absl::StrCat("the Host field ", graph::Quoted(*host), " is not a host[:port]"));
  }
  bool close = false, keep_alive = false;
  for (const std::string& c : ListElements(r, "connection")) {
    close |= absl::EqualsIgnoreCase(c, "close");
    keep_alive |= absl::EqualsIgnoreCase(c, "keep-alive");
  }
  // HTTP/1.1 persists unless told to close; HTTP/1.0 only when asked to.
  keep_alive_ = !close && (r.minor_version == 1 || keep_alive);

  const bool has_te = r.Header("transfer-encoding") != nullptr;
  const bool has_cl = r.Header("content-length") != nullptr;
  remaining_ = 0;
  if (has_te) {
    if (r.minor_version == 0) return Fail(400, "an HTTP/1.0 request may not carry Transfer-Encoding");
    const std::vector<std::string> codings = ListElements(r, "transfer-encoding");
    if (codings.empty() || !absl::EqualsIgnoreCase(codings.back(), "chunked")) {
      return Fail(400, "the request's Transfer-Encoding does not end with chunked, so its body has no length");
    }
    for (size_t i = 0; i + 1 < codings.size(); ++i) {
      if (absl::EqualsIgnoreCase(codings[i], "chunked")) return Fail(400, "Transfer-Encoding applies chunked twice");
    }
    if (codings.size() > 1) {
      return Fail(501, absl::StrCat("the transfer coding ", graph::Quoted(codings[0]),
                                    " is not implemented (only chunked is)"));
    }
    // RFC 9112 §6.3: chunked overrides Content-Length, and the connection
    // closes after the answer (the two disagreeing is how requests are smuggled).
    if (has_cl) keep_alive_ = false;
    state_ = State::kChunkSize;
  } else if (has_cl) {
    const std::vector<std::string> values = ListElements(r, "content-length");
    uint64_t length = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string& v = values[i];
      uint64_t n = 0;
      const bool digits = !v.empty() && v.size() <= 19 && std::all_of(v.begin(), v.end(), absl::ascii_isdigit);
      if (digits) {
        for (char c : v) n = n * 10 + static_cast<uint64_t>(c - '0');
      }
      if (!digits) return Fail(400, absl::StrCat("Content-Length ", graph::Quoted(v), " is not a byte count"));
      if (i > 0 && n != length) {
        return Fail(400, absl::StrCat("the request has conflicting Content-Length values (", length, " and ", n, ")"));
      }
      length = n;
    }
    if (values.empty()) return Fail(400, "Content-Length is empty");
    if (length > limits_.max_body_bytes) {
      return Fail(413, absl::StrCat("the request body (Content-Length ", length, ") is larger than the server's limit of ",
                                    BodyLimitText(limits_)));
    }
    remaining_ = length;
    request_.body.reserve(static_cast<size_t>(std::min(length, kBodyReserve)));
    state_ = length == 0 ? State::kComplete : State::kLengthBody;
  } else {
    state_ = State::kComplete;
  }

  if (const std::string* expect = r.Header("expect"); expect != nullptr) {
    if (!absl::EqualsIgnoreCase(TrimWhitespace(*expect), "100-continue")) {
      return Fail(417, absl::StrCat("the expectation ", graph::Quoted(*expect), " is not supported (100-continue is)"));
    }
    expects_continue_ = r.minor_version == 1 && state_ != State::kComplete;
  }
  return Event::kHead;
}

bool HttpRequestReader::ParseChunkSize(absl::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == '0') ++i;
  const size_t first = i;
  uint64_t size = 0;
  for (; i < line.size() && HexValue(line[i]) >= 0; ++i) {
    if (i - first >= 16) return Refuse(413, "a chunk size past 2^64 bytes");
    size = size * 16 + static_cast<uint64_t>(HexValue(line[i]));
  }
  if (i == 0) return Refuse(400, absl::StrCat("the chunk size line ", graph::Quoted(line), " has no hex size"));
  const absl::string_view rest = TrimWhitespace(line.substr(i));
  if (!rest.empty() && (rest[0] != ';' || !IsFieldValue(rest))) {
    return Refuse(400, absl::StrCat("the chunk size line ", graph::Quoted(line), " is not HEX[;extensions]"));
  }
  const uint64_t room = limits_.max_body_bytes - request_.body.size();
  if (size > room) {
    return Refuse(413, absl::StrCat("the chunked request body passed the server's limit of ", BodyLimitText(limits_)));
  }
  if (size == 0) {
    state_ = State::kTrailers;
  } else {
    remaining_ = size;
    state_ = State::kChunkData;
  }
  return true;
}

void HttpRequestReader::TakeBody() {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size() - pos_, remaining_));
  request_.body.append(buffer_, pos_, n);
  pos_ += n;
  remaining_ -= n;
  scanned_ = 0;
}

HttpRequest HttpRequestReader::TakeRequest() {
  HttpRequest out = std::move(request_);
  request_ = HttpRequest();
  state_ = State::kRequestLine;
  head_bytes_ = 0;
  fields_ = 0;
  blank_lines_ = 0;
  remaining_ = 0;
  expects_continue_ = false;
  keep_alive_ = true;
  Compact();
  return out;
}

}  // namespace npu::http
