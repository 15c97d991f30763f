// Text from files and command lines on its way to a terminal or a log: control characters
// (an escape sequence can set a terminal's title, clear its screen or hide what follows),
// bytes that are not UTF-8 and Unicode's C1 controls are written as \xNN, and text is cut to
// a length. Every message that quotes input goes through printable().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace legalnet {

// The length of the UTF-8 sequence at text[i] when it is valid and not a C1 control, else 0.
inline size_t printable_utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b = byte(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (b >= 0xC2 && b <= 0xDF)
    n = 2, cp = b & 0x1Fu;
  else if (b >= 0xE0 && b <= 0xEF)
    n = 3, cp = b & 0x0Fu;
  else if (b >= 0xF0 && b <= 0xF4)
    n = 4, cp = b & 0x07u;
  else
    return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  const bool invalid = cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF);
  const bool c1 = cp >= 0x80 && cp <= 0x9F;
  return overlong || invalid || c1 ? 0 : n;
}

// `text` with every control character (below 0x20, 0x7F, U+0080..U+009F) and every byte that
// is not part of valid UTF-8 written as \xNN; longer than `max_bytes`, it is cut and ends "...".
// The cut falls between pieces (a character or an escape), so the result is never more than
// max_bytes + 3 bytes and never ends in half a character or half an escape.
inline std::string printable(std::string_view text, size_t max_bytes = 200) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    const size_t n = b >= 0x80 ? printable_utf8_length(text, i) : (b >= 0x20 && b < 0x7F ? 1 : 0);
    if (out.size() + (n ? n : 4) > max_bytes) return out + "...";
    if (n) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      constexpr char HEX[] = "0123456789abcdef";
      out += "\\x";
      out += HEX[b >> 4];
      out += HEX[b & 15];
      ++i;
    }
  }
  return out;
}

}  // namespace legalnet
