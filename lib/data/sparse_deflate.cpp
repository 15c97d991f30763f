#include "data/sparse_deflate.h"

#include <algorithm>
#include <array>
#include <queue>
#include <stdexcept>

namespace legalnet::data {
namespace {

constexpr int END_OF_BLOCK = 256;
constexpr int MIN_MATCH = 3, MAX_MATCH = 258;
constexpr int LITLEN_CODES = 286, CODE_LENGTH_CODES = 19;

// A symbol of the literal/length alphabet with the extra bits of a length (RFC 1951, 3.2.5).
struct Token {
  uint16_t symbol;
  uint8_t extra_bits;
  uint8_t extra;
};

struct LengthCode {
  uint16_t symbol;
  uint8_t extra_bits;
  uint8_t extra;
};

// The length code of every match length 3..258; 258 has its own code, 285.
const std::array<LengthCode, MAX_MATCH + 1>& length_codes() {
  static const auto table = [] {
    std::array<LengthCode, MAX_MATCH + 1> t{};
    constexpr int BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                              31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    constexpr int EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int code = 0; code < 29; ++code) {
      const int last = code == 28 ? MAX_MATCH : std::min(BASE[code] + (1 << EXTRA[code]) - 1, MAX_MATCH - 1);
      for (int length = BASE[code]; length <= last; ++length)
        t[size_t(length)] = {uint16_t(257 + code), uint8_t(EXTRA[code]), uint8_t(length - BASE[code])};
    }
    return t;
  }();
  return table;
}

// Code lengths of a Huffman code for `freq`, none longer than `limit`. Symbols of frequency 0
// get no code. Too deep a tree (it needs ~25 symbols with Fibonacci-like counts) is redone on
// flattened counts, which keeps the order of frequencies and so stays near optimal.
std::vector<uint8_t> huffman_lengths(std::vector<uint32_t> freq, int limit) {
  const size_t n = freq.size();
  std::vector<uint8_t> lengths(n, 0);
  size_t used = 0;
  for (size_t s = 0; s < n; ++s) used += freq[s] != 0;
  if (used == 0) return lengths;
  if (used == 1) {  // one symbol still needs a one-bit code
    for (size_t s = 0; s < n; ++s)
      if (freq[s]) lengths[s] = 1;
    return lengths;
  }
  for (;;) {
    // Nodes 0..n-1 are symbols, then the merged ones; parent links give each leaf's depth.
    using Node = std::pair<uint64_t, uint32_t>;  // (weight, node): ties broken by node, so deterministic
    std::priority_queue<Node, std::vector<Node>, std::greater<>> heap;
    std::vector<uint32_t> parent(2 * n, 0);
    for (size_t s = 0; s < n; ++s)
      if (freq[s]) heap.emplace(freq[s], uint32_t(s));
    uint32_t next = uint32_t(n);
    while (heap.size() > 1) {
      const Node a = heap.top();
      heap.pop();
      const Node b = heap.top();
      heap.pop();
      parent[a.second] = parent[b.second] = next;
      heap.emplace(a.first + b.first, next++);
    }
    const uint32_t root = next - 1;
    std::vector<uint8_t> depth(next, 0);
    for (uint32_t node = root; node-- > 0;)  // parents are made after their children
      if (node >= n || freq[node]) depth[node] = uint8_t(depth[parent[node]] + 1);
    int deepest = 0;
    for (size_t s = 0; s < n; ++s)
      if (freq[s]) lengths[s] = depth[s], deepest = std::max(deepest, int(depth[s]));
    if (deepest <= limit) return lengths;
    for (auto& f : freq)
      if (f) f = (f >> 1) | 1;
  }
}

// Canonical codes for `lengths` (RFC 1951, 3.2.2), bit-reversed for an LSB-first writer.
std::vector<uint16_t> canonical_codes(const std::vector<uint8_t>& lengths) {
  std::array<uint16_t, 16> count{}, next{};
  for (uint8_t l : lengths)
    if (l) ++count[l];
  uint16_t code = 0;
  for (int bits = 1; bits < 16; ++bits) next[size_t(bits)] = code = uint16_t((code + count[size_t(bits - 1)]) << 1);
  std::vector<uint16_t> codes(lengths.size(), 0);
  for (size_t s = 0; s < lengths.size(); ++s) {
    const int l = lengths[s];
    if (!l) continue;
    uint16_t c = next[size_t(l)]++, reversed = 0;
    for (int i = 0; i < l; ++i) reversed = uint16_t(reversed << 1 | (c >> i & 1));
    codes[s] = reversed;
  }
  return codes;
}

class BitWriter {
 public:
  explicit BitWriter(std::vector<unsigned char>& out) : out_(out) {}
  void put(uint32_t value, int bits) {
    acc_ |= uint64_t(value) << used_;
    used_ += bits;
    while (used_ >= 8) out_.push_back(static_cast<unsigned char>(acc_)), acc_ >>= 8, used_ -= 8;
  }
  void flush() {
    if (used_) out_.push_back(static_cast<unsigned char>(acc_));
    acc_ = 0, used_ = 0;
  }

 private:
  std::vector<unsigned char>& out_;
  uint64_t acc_ = 0;
  int used_ = 0;
};

// A run of zeros after a one (or at the start): a literal 0, then copies of it, each 3..258 long
// (a rest of 1 or 2 bytes as literals).
void add_zeros(uint64_t run, std::vector<Token>& tokens) {
  if (run == 0) return;
  tokens.push_back({0, 0, 0});
  --run;
  const auto& codes = length_codes();
  while (run >= MIN_MATCH) {
    uint64_t length = std::min<uint64_t>(run, MAX_MATCH);
    if (run - length > 0 && run - length < MIN_MATCH) length = run - MIN_MATCH;  // leave a copyable rest
    const LengthCode& c = codes[size_t(length)];
    tokens.push_back({c.symbol, c.extra_bits, c.extra});
    run -= length;
  }
  for (; run > 0; --run) tokens.push_back({0, 0, 0});
}

// The code lengths of the literal/length and distance codes, run-length coded with the
// code-length alphabet (16: repeat the previous 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros).
struct CodeLengthSymbol {
  uint8_t symbol, extra_bits, extra;
};

std::vector<CodeLengthSymbol> run_length_code(const std::vector<uint8_t>& lengths) {
  std::vector<CodeLengthSymbol> out;
  for (size_t i = 0; i < lengths.size();) {
    const uint8_t value = lengths[i];
    size_t run = 1;
    while (i + run < lengths.size() && lengths[i + run] == value) ++run;
    i += run;
    if (value == 0) {
      while (run >= 11) {
        const size_t n = std::min<size_t>(run, 138);
        out.push_back({18, 7, uint8_t(n - 11)});
        run -= n;
      }
      if (run >= 3) out.push_back({17, 3, uint8_t(run - 3)}), run = 0;
      for (; run > 0; --run) out.push_back({0, 0, 0});
    } else {
      out.push_back({value, 0, 0});
      --run;
      while (run >= 3) {
        const size_t n = std::min<size_t>(run, 6);
        out.push_back({16, 2, uint8_t(n - 3)});
        run -= n;
      }
      for (; run > 0; --run) out.push_back({value, 0, 0});
    }
  }
  return out;
}

}  // namespace

void deflate_ones(uint64_t size, const std::vector<uint32_t>& ones, std::vector<unsigned char>& out) {
  if (size == 0) throw std::invalid_argument("deflate_ones: empty buffer");
  thread_local std::vector<Token> tokens;
  tokens.clear();
  uint64_t at = 0;
  for (uint32_t one : ones) {
    if (one < at || one >= size) throw std::invalid_argument("deflate_ones: offsets not sorted, distinct and in range");
    add_zeros(one - at, tokens);
    tokens.push_back({1, 0, 0});
    at = uint64_t(one) + 1;
  }
  add_zeros(size - at, tokens);

  std::vector<uint32_t> freq(LITLEN_CODES, 0);
  for (const Token& t : tokens) ++freq[t.symbol];
  freq[END_OF_BLOCK] = 1;
  const std::vector<uint8_t> litlen = huffman_lengths(freq, 15);
  // Every copy is at distance 1: one distance code, code 0, one bit long.
  size_t nlit = LITLEN_CODES;
  while (litlen[nlit - 1] == 0) --nlit;
  std::vector<uint8_t> all(litlen.begin(), litlen.begin() + long(nlit));
  all.push_back(1);
  const std::vector<CodeLengthSymbol> header = run_length_code(all);

  std::vector<uint32_t> header_freq(CODE_LENGTH_CODES, 0);
  for (const auto& s : header) ++header_freq[s.symbol];
  const std::vector<uint8_t> header_lengths = huffman_lengths(header_freq, 7);
  constexpr int ORDER[CODE_LENGTH_CODES] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  int nclen = CODE_LENGTH_CODES;
  while (nclen > 4 && header_lengths[size_t(ORDER[nclen - 1])] == 0) --nclen;

  BitWriter bits(out);
  bits.put(1, 1);  // the last block
  bits.put(2, 2);  // with dynamic Huffman codes
  bits.put(uint32_t(nlit - 257), 5);
  bits.put(0, 5);  // one distance code
  bits.put(uint32_t(nclen - 4), 4);
  for (int i = 0; i < nclen; ++i) bits.put(header_lengths[size_t(ORDER[i])], 3);
  const std::vector<uint16_t> header_codes = canonical_codes(header_lengths);
  for (const auto& s : header) {
    bits.put(header_codes[s.symbol], header_lengths[s.symbol]);
    if (s.extra_bits) bits.put(s.extra, s.extra_bits);
  }
  const std::vector<uint16_t> codes = canonical_codes(litlen);
  for (const Token& t : tokens) {
    bits.put(codes[t.symbol], litlen[t.symbol]);
    if (t.symbol > END_OF_BLOCK) {
      if (t.extra_bits) bits.put(t.extra, t.extra_bits);
      bits.put(0, 1);  // distance code 0: distance 1
    }
  }
  bits.put(codes[END_OF_BLOCK], litlen[END_OF_BLOCK]);
  bits.flush();
}

}  // namespace legalnet::data
