// Client-chosen text in error messages stays bounded and valid UTF-8.
#include "server/graph/bounded_text.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace npu::graph {
namespace {

// What gRPC sends for `text`: printable ASCII but '%' as is, every other byte as %XX.
size_t PercentEncodedSize(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c >= 0x20 && c <= 0x7E && c != '%') ? 1 : 3;
  return n;
}

bool IsValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

TEST(BoundedTextTest, ShortNamesAreQuotedWhole) {
  EXPECT_EQ(Quoted("fc1"), "\"fc1\"");
  EXPECT_EQ(Quoted(""), "\"\"");
  EXPECT_EQ(Quoted(std::string(kMaxQuotedName, 'a')), "\"" + std::string(kMaxQuotedName, 'a') + "\"");
}

TEST(BoundedTextTest, LongNamesKeepTheirStartAndSayTheirLength) {
  const std::string name(16384, 'n');
  EXPECT_EQ(Quoted(name), absl::StrCat("\"", std::string(kMaxQuotedName, 'n'), "...\" (16384 bytes)"));
}

TEST(BoundedTextTest, ANameIsNeverCutInsideACharacter) {
  // 'é' is 2 bytes, percent-encoded 6: the cut lands between characters and the result stays UTF-8.
  std::string name;
  for (int i = 0; i < 200; ++i) name += "\xc3\xa9";
  const std::string q = Quoted(name);
  EXPECT_TRUE(IsValidUtf8(q)) << q;
  EXPECT_TRUE(absl::EndsWith(q, "...\" (400 bytes)")) << q;
}

TEST(BoundedTextTest, ShortMessagesPassUnchanged) {
  EXPECT_EQ(BoundedMessage("node \"a\" (Add): shapes differ", 4096), "node \"a\" (Add): shapes differ");
}

TEST(BoundedTextTest, LongMessagesKeepHeadAndTailWithinTheWireBound) {
  const std::string text = "graph id \"" + std::string(70000, 'g') + "\" not found";
  const std::string bounded = BoundedMessage(text, 4096);
  EXPECT_LE(PercentEncodedSize(bounded), 4096u);
  EXPECT_TRUE(absl::StartsWith(bounded, "graph id \"ggg")) << bounded.substr(0, 40);
  EXPECT_TRUE(absl::EndsWith(bounded, "ggg\" not found"));
  EXPECT_TRUE(absl::StrContains(bounded, "the message has 70021 bytes; the server log has all of it"));
}

TEST(BoundedTextTest, TheBoundCountsPercentEncodingAndKeepsUtf8) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "\xe2\x82\xac";  // '€': 3 bytes, 9 on the wire
  text += "100%";
  const std::string bounded = BoundedMessage(text, 4096);
  EXPECT_LE(PercentEncodedSize(bounded), 4096u);
  EXPECT_GT(PercentEncodedSize(bounded), 4000u);  // the room is used, not wasted
  EXPECT_TRUE(IsValidUtf8(bounded));
  EXPECT_TRUE(absl::EndsWith(bounded, "100%"));
}

}  // namespace
}  // namespace npu::graph
