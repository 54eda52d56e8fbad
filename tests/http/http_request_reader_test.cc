// The HTTP/1.1 framing rules of RFC 9112 on bytes alone (no sockets): what
// is one request and where it ends, what is refused with which status, and
// that bytes split anywhere read the same. http_server_test.cc holds the
// same rules over real connections.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http/http_request_reader.h"

namespace npu::http {
namespace {

using Event = HttpRequestReader::Event;
using ::testing::HasSubstr;
using namespace std::string_literals;

HttpLimits SmallLimits() {
  HttpLimits l;
  l.max_body_bytes = 1000;
  l.body_limit_name = "--max_message_bytes";
  return l;
}

struct Read {
  std::vector<HttpRequest> requests;
  std::vector<bool> keep_alive;
  bool failed = false;
  HttpError error;
  bool ended = false;
};

// Feeds `bytes` in pieces of `piece` bytes (then the end of input when
// `eof`), collecting every request until an error or the end.
Read Feed(const std::string& bytes, size_t piece = 1 << 20, bool eof = true, HttpLimits limits = SmallLimits()) {
  HttpRequestReader reader(limits);
  Read out;
  size_t at = 0;
  for (;;) {
    const Event e = reader.Next();
    if (e == Event::kNeedInput) {
      if (at < bytes.size()) {
        const size_t n = std::min(piece, bytes.size() - at);
        reader.Append(absl::string_view(bytes).substr(at, n));
        at += n;
      } else if (eof) {
        reader.EndOfInput();
      } else {
        return out;
      }
    } else if (e == Event::kRequest) {
      out.keep_alive.push_back(reader.keep_alive());
      out.requests.push_back(reader.TakeRequest());
    } else if (e == Event::kError) {
      out.failed = true;
      out.error = reader.error();
      return out;
    } else if (e == Event::kEnd) {
      out.ended = true;
      return out;
    }
  }
}

HttpError ErrorOf(const std::string& bytes) {
  Read r = Feed(bytes);
  EXPECT_TRUE(r.failed) << bytes.substr(0, 200);
  return r.error;
}

TEST(HttpRequestReaderTest, ReadsARequestWhateverTheSplit) {
  const std::string bytes =
      "POST /v2/models/a%20b/infer?x=1 HTTP/1.1\r\nHost: h:80\r\nX-Thing:  v  \r\nContent-Length: 5\r\n\r\nhello";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, bytes.size()}) {
    Read r = Feed(bytes, piece);
    ASSERT_EQ(r.requests.size(), 1u) << piece;
    const HttpRequest& q = r.requests[0];
    EXPECT_EQ(q.method, "POST");
    EXPECT_EQ(q.path, "/v2/models/a b/infer");
    EXPECT_EQ(q.query, "x=1");
    EXPECT_EQ(q.body, "hello");
    EXPECT_EQ(q.HeaderOr("x-THING"), "v");
    EXPECT_TRUE(r.keep_alive[0]);
    EXPECT_TRUE(r.ended);
  }
}

TEST(HttpRequestReaderTest, PipelinedRequestsComeOutInOrder) {
  std::string bytes;
  for (int i = 0; i < 3; ++i) {
    bytes += "POST /" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n" + std::to_string(i);
  }
  bytes += "GET /last HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  Read r = Feed(bytes, 5);
  ASSERT_EQ(r.requests.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.requests[i].path, "/" + std::to_string(i));
    EXPECT_EQ(r.requests[i].body, std::to_string(i));
  }
  EXPECT_EQ(r.requests[3].body, "abc");
}

TEST(HttpRequestReaderTest, ContentLengthMustBeOneByteCount) {
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  for (const char* cl : {"Content-Length: 5\r\nContent-Length: 6", "Content-Length: 5, 6", "Content-Length: -1",
                         "Content-Length: +5", "Content-Length: 5a", "Content-Length: 0x5", "Content-Length:",
                         "Content-Length: 99999999999999999999"}) {
    const HttpError e = ErrorOf(head + cl + "\r\n\r\nhello");
    EXPECT_EQ(e.status, 400) << cl;
  }
  EXPECT_THAT(ErrorOf(head + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello").message,
              HasSubstr("conflicting Content-Length values (5 and 6)"));
  // The same value twice is one length (RFC 9110 §8.6).
  for (const char* cl : {"Content-Length: 5\r\nContent-Length: 5", "Content-Length: 5, 5"}) {
    Read r = Feed(head + cl + "\r\n\r\nhello");
    ASSERT_EQ(r.requests.size(), 1u) << cl;
    EXPECT_EQ(r.requests[0].body, "hello");
  }
}

TEST(HttpRequestReaderTest, ChunkedOverridesContentLengthAndTheConnectionCloses) {
  Read r = Feed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_GE(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].body, "hello");
  EXPECT_FALSE(r.keep_alive[0]);
}

TEST(HttpRequestReaderTest, TransferCodingsOtherThanChunkedAreRefused) {
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  EXPECT_EQ(ErrorOf(head + "Transfer-Encoding: gzip, chunked\r\n\r\n").status, 501);
  EXPECT_EQ(ErrorOf(head + "Transfer-Encoding: chunked, gzip\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf(head + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf(head + "Transfer-Encoding: identity\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n0\r\n\r\n").status, 400);
  // Case and list syntax are the RFC's.
  Read r = Feed(head + "Transfer-Encoding: ,CHUNKED\r\n\r\n2;ext=1;x\r\nab\r\n000\r\nTrailer-Field: t\r\n\r\n");
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].body, "ab");
  EXPECT_EQ(r.requests[0].Header("trailer-field"), nullptr);  // trailers are not headers
}

TEST(HttpRequestReaderTest, MalformedChunksAreRefused) {
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(ErrorOf(head + "zz\r\n").status, 400);
  EXPECT_EQ(ErrorOf(head + "\r\n").status, 400);
  EXPECT_EQ(ErrorOf(head + "3\r\nabcd\r\n0\r\n\r\n").status, 400);  // data longer than its size
  EXPECT_EQ(ErrorOf(head + "3 x\r\nabc\r\n0\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf(head + "3\r\nabc\r\n0\r\nbad trailer\r\n\r\n").status, 400);
}

TEST(HttpRequestReaderTest, TheBodyLimitHoldsForEveryFraming) {
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  // Refused from the head, before a byte of the body is read.
  Read r = Feed(head + "Content-Length: 1001\r\n\r\n", 1 << 20, /*eof=*/false);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.error.status, 413);
  EXPECT_THAT(r.error.message, HasSubstr("1000 bytes (--max_message_bytes)"));
  // Chunked: as soon as a chunk's size passes it, before its data.
  r = Feed(head + "Transfer-Encoding: chunked\r\n\r\n3e8\r\n" + std::string(1000, 'a') + "\r\n1\r\n", 1 << 20, false);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.error.status, 413);
  EXPECT_THAT(r.error.message, HasSubstr("chunked request body passed the server's limit"));
  EXPECT_EQ(ErrorOf(head + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n").status, 413);
  // At the limit it is read.
  r = Feed(head + "Content-Length: 1000\r\n\r\n" + std::string(1000, 'b'));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].body.size(), 1000u);
}

TEST(HttpRequestReaderTest, HeaderAndTargetLimits) {
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 100; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(ErrorOf(many + "\r\n").status, 431);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(70000, 'v') + "\r\n\r\n").status, 431);
  // A header line that never ends is refused once it passes the limit.
  Read r = Feed("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(70000, 'v'), 4096, /*eof=*/false);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.error.status, 431);
  EXPECT_EQ(ErrorOf("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n").status, 414);
  r = Feed("GET /" + std::string(20000, 'a'), 4096, /*eof=*/false);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.error.status, 414);
  // Trailers count against the same limits.
  std::string trailers = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 101; ++i) trailers += "T: v\r\n";
  EXPECT_EQ(ErrorOf(trailers + "\r\n").status, 431);
}

// A line exactly as long as its limit is whole once its CRLF arrives, even
// when the CR comes in one read and the LF in the next (a fuzzer finding:
// read byte by byte, the pending CR counted against the limit, so the same
// bytes got 414 instead of the 400 their version deserves).
TEST(HttpRequestReaderTest, ALineAtItsLimitReadsTheSameWhereverItsCrlfIsSplit) {
  HttpLimits limits = SmallLimits();
  limits.max_target_bytes = 100;
  const size_t request_line_limit = 100 + 256;  // the target's limit and the request line's slack
  const std::string line = "GET / " + std::string(request_line_limit - 6, 'v');
  for (size_t piece : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    Read r = Feed(line + "\r\nHost: h\r\n\r\n", piece, true, limits);
    ASSERT_TRUE(r.failed) << piece;
    EXPECT_EQ(r.error.status, 400) << piece << ": " << r.error.message;
  }
}

TEST(HttpRequestReaderTest, FieldLinesFollowTheGrammar) {
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n").status, 400);
  EXPECT_THAT(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 3\r\n\r\nabc").message,
              HasSubstr("whitespace between the field name"));
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nno colon\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"s).status, 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nX: a\r\n\r\n").status, 400);  // no Host
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: a b\r\n\r\n").status, 400);
  // HTTP/1.0 needs no Host, and closes unless asked to keep alive.
  Read r = Feed("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_FALSE(r.keep_alive[0]);
  EXPECT_TRUE(r.keep_alive[1]);
  r = Feed("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n");
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_FALSE(r.keep_alive[0]);
}

TEST(HttpRequestReaderTest, RequestLinesFollowTheGrammar) {
  EXPECT_EQ(ErrorOf("GET / HTTP/2.0\r\nHost: h\r\n\r\n").status, 505);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1x\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET  / HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("G(T / HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET /a%2 HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET ftp://x/ HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET * HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\r\nHost: h\r\n\r\n").status, 400);
  // absolute-form, and the empty lines a client may send before a request.
  Read r = Feed("\r\n\r\nGET http://h:1/v2/x%41?q HTTP/1.1\nHost: h:1\n\nOPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.requests[0].path, "/v2/xA");
  EXPECT_EQ(r.requests[0].query, "q");
  EXPECT_EQ(r.requests[1].path, "*");
}

TEST(HttpRequestReaderTest, TheEndOfInput) {
  // Half-closed after whole requests: they are all read, then the end.
  Read r = Feed("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.requests.size(), 2u);
  EXPECT_TRUE(r.ended);
  // Inside a request: an error, which says so.
  EXPECT_THAT(ErrorOf("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\nabc").message,
              HasSubstr("ended in the middle of a request"));
  EXPECT_EQ(ErrorOf("GET / HT").status, 400);
}

TEST(HttpRequestReaderTest, Expectations) {
  HttpRequestReader reader(SmallLimits());
  reader.Append("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n");
  ASSERT_EQ(reader.Next(), Event::kHead);
  EXPECT_TRUE(reader.expects_continue());
  EXPECT_EQ(reader.Next(), Event::kNeedInput);
  reader.Append("ok");
  ASSERT_EQ(reader.Next(), Event::kRequest);
  EXPECT_EQ(reader.TakeRequest().body, "ok");
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\nContent-Length: 0\r\n\r\n").status, 417);
}

}  // namespace
}  // namespace npu::http
