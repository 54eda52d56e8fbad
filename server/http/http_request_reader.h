// HTTP/1.1 requests read from a connection's bytes as RFC 9112 frames them,
// with no I/O of its own: the connection appends what it receives and asks
// for the next event. It owns the framing rules, so every one of them is
// checked in one place (and fuzzed, fuzz/http_fuzzer.cc):
//   - the request line: method token, request-target (origin or absolute
//     form; `*` for OPTIONS), HTTP/1.0 or 1.1 (another major version: 505);
//   - field lines: name a token with no whitespace before the colon, no
//     obs-fold, no control characters in the value; one Host in HTTP/1.1;
//   - the body (§6.3): Transfer-Encoding chunked (with or without a
//     Content-Length, which it then overrides and the connection closes
//     after the answer; another transfer coding: 501; HTTP/1.0 with
//     Transfer-Encoding: 400), else Content-Length (every value the same
//     1*DIGIT, else 400), else none;
//   - limits: request-target length (414), field line count and header
//     section bytes (431, trailers counted too), body bytes (413 as soon as a
//     Content-Length or a chunk passes it, before the bytes are read).
// Any error leaves the connection unusable: it is answered and closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "server/http/http_message.h"

namespace npu::http {

struct HttpLimits {
  size_t max_target_bytes = 8192;
  size_t max_header_fields = 100;
  size_t max_header_bytes = 64 * 1024;  // the request line and the field lines
  uint64_t max_body_bytes = uint64_t{1} << 30;
  // Names the body limit in 413 messages ("--max_message_bytes").
  std::string body_limit_name;
};

// "N bytes (--max_message_bytes)": the body limit as 413 messages name it.
std::string BodyLimitText(const HttpLimits& limits);

struct HttpError {
  int status = 400;
  std::string message;
};

class HttpRequestReader {
 public:
  enum class Event {
    kNeedInput,  // Append() more bytes, or EndOfInput()
    kHead,       // a request's head was read; its body comes next (once per request)
    kRequest,    // a whole request: TakeRequest()
    kError,      // the bytes are not a request that can be read: answer error() and close
    kEnd,        // the peer ended the input between requests
  };

  explicit HttpRequestReader(HttpLimits limits) : limits_(std::move(limits)) {}

  void Append(absl::string_view bytes);
  // The peer will send nothing more (it may still read our answers).
  void EndOfInput() { eof_ = true; }
  Event Next();

  // From kHead on: the request's line and fields (its body after kRequest).
  const HttpRequest& request() const { return request_; }
  // The client waits for "100 Continue" before it sends the body.
  bool expects_continue() const { return expects_continue_; }
  // After the answer to this request the connection stays open.
  bool keep_alive() const { return keep_alive_; }
  // After kRequest: the request, and the reader moves on to the next one.
  HttpRequest TakeRequest();
  const HttpError& error() const { return error_; }
  // No byte of a next request has arrived.
  bool idle() const { return state_ == State::kRequestLine && pos_ == buffer_.size(); }
  // The bytes buffered and not yet consumed (pipelined requests).
  size_t buffered() const { return buffer_.size() - pos_; }

 private:
  enum class State {
    kRequestLine, kFields, kLengthBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers, kComplete, kFailed,
  };
  enum class Line { kOk, kNeedMore, kTooLong };

  // Records the error: kError for Next, false for a parse step.
  Event Fail(int status, std::string message);
  bool Refuse(int status, std::string message);
  // The next line (without CRLF or LF) if it is all here and at most `max`
  // bytes; `head`: it counts against max_header_bytes.
  Line TakeLine(size_t max, absl::string_view* line, bool head);
  // Each false after Fail.
  bool ParseRequestLine(absl::string_view line);
  bool ParseField(absl::string_view line, bool trailer);
  bool ParseChunkSize(absl::string_view line);
  Event EndOfHead();
  // Moves up to `remaining_` bytes of the buffer into the body.
  void TakeBody();
  void Compact();

  HttpLimits limits_;
  std::string buffer_;
  size_t pos_ = 0;      // consumed up to here
  size_t scanned_ = 0;  // no '\n' in [pos_, pos_ + scanned_)
  bool eof_ = false;

  State state_ = State::kRequestLine;
  HttpRequest request_;
  HttpError error_;
  size_t head_bytes_ = 0;
  size_t fields_ = 0;
  int blank_lines_ = 0;
  uint64_t remaining_ = 0;  // body or chunk bytes still to come
  bool expects_continue_ = false;
  bool keep_alive_ = true;
};

}  // namespace npu::http
