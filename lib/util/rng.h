// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. Each game's stream is a pure function of (seed, game index), so
// games can be played in any order on any thread and still be byte-identical.
#pragma once

#include <array>
#include <cstdint>

namespace legalnet {

class GameRng {
 public:
  GameRng(uint64_t seed, uint64_t stream) : key_{uint32_t(seed), uint32_t(seed >> 32)}, stream_(stream) {}

  // The next 32 random bits of the stream.
  uint32_t next() {
    if (used_ == 4) refill();
    return block_[used_++];
  }

  // A uniform integer in [0, n) for n > 0, without modulo bias (Lemire's method).
  uint32_t below(uint32_t n) {
    uint64_t m = uint64_t(next()) * n;
    uint32_t low = uint32_t(m);
    if (low < n) {
      const uint32_t threshold = uint32_t(-n) % n;
      while (low < threshold) {
        m = uint64_t(next()) * n;
        low = uint32_t(m);
      }
    }
    return uint32_t(m >> 32);
  }

  // A uniform double in [0, 1) with 53 random bits.
  double uniform() {
    const uint64_t bits = (uint64_t(next()) << 21) ^ next();
    return double(bits & ((uint64_t(1) << 53) - 1)) * 0x1.0p-53;
  }

  // One Philox4x32-10 block: ten rounds of the bijection keyed by `key` applied to `ctr`.
  static std::array<uint32_t, 4> philox(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
      const uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
      ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    return ctr;
  }

 private:
  // The counter is (block number, stream); the key is the seed.
  void refill() {
    block_ = philox({uint32_t(counter_), uint32_t(counter_ >> 32), uint32_t(stream_), uint32_t(stream_ >> 32)}, key_);
    ++counter_;
    used_ = 0;
  }

  std::array<uint32_t, 2> key_;
  uint64_t stream_;
  uint64_t counter_ = 0;
  std::array<uint32_t, 4> block_{};
  int used_ = 4;
};

}  // namespace legalnet
