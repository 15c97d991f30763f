#include "nn/training_data.h"

#include <cstring>

#include "chess/bitboard.h"
#include "data/dataset_format.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "games/rng.h"
#include "util/progress.h"

namespace legalnet::nn {

void CompactPositions::expand_planes(size_t r, float* out) const {
  const float s = side[r];
  for (int i = 0; i < encode::PLANE_SIZE; ++i) out[i] = s;
  std::memset(out + encode::PLANE_SIZE, 0, sizeof(float) * (encode::POSITION_SIZE - encode::PLANE_SIZE));
  const int8_t* sq = &squares[r * 64];
  for (int i = 0; i < 64; ++i)
    if (sq[i]) out[std::abs(sq[i]) * encode::PLANE_SIZE + i] = sq[i] > 0 ? 1.0f : -1.0f;
}

void CompactPositions::expand_mask(size_t r, float* out) const {
  std::memset(out, 0, sizeof(float) * encode::MOVE_INDICES);
  for (uint64_t i = legal_begin[r]; i < legal_begin[r + 1]; ++i) out[legal[i]] = 1.0f;
}

void CompactPositions::append_row(const CompactPositions& o, size_t r) {
  squares.insert(squares.end(), o.squares.begin() + long(r * 64), o.squares.begin() + long(r * 64 + 64));
  side.push_back(o.side[r]);
  legal.insert(legal.end(), o.legal.begin() + long(o.legal_begin[r]), o.legal.begin() + long(o.legal_begin[r + 1]));
  legal_begin.push_back(legal.size());
  game.push_back(o.game[r]);
  ply.push_back(o.ply[r]);
  in_check.push_back(o.in_check[r]);
}

bool side_to_move_in_check(const int8_t* squares, int side) {
  using namespace chess;
  init_bitboards();
  Bitboard by_type[PIECE_TYPE_NB] = {}, them = 0, occupied = 0;
  Square king = SQ_NONE;
  for (int s = 0; s < 64; ++s) {
    const int code = squares[s];
    if (!code) continue;
    occupied |= square_bb(Square(s));
    if ((code > 0) == (side > 0)) {
      if (std::abs(code) == KING) king = Square(s);
      continue;
    }
    them |= square_bb(Square(s));
    by_type[std::abs(code)] |= square_bb(Square(s));
  }
  if (king == SQ_NONE) return false;
  const Color us = side > 0 ? WHITE : BLACK;
  return (pawn_attacks(us, king) & by_type[PAWN]) || (knight_attacks(king) & by_type[KNIGHT]) ||
         (bishop_attacks(king, occupied) & (by_type[BISHOP] | by_type[QUEEN])) ||
         (rook_attacks(king, occupied) & (by_type[ROOK] | by_type[QUEEN])) || (king_attacks(king) & by_type[KING]);
}

CompactPositions load_positions(const std::vector<std::string>& paths, const LoadOptions& options) {
  CompactPositions out;
  constexpr uint64_t SLICE = 16384;  // a multiple of the 256-row chunks
  std::vector<data::DatasetReader> readers;
  uint64_t total = 0;
  for (const auto& p : paths) {
    readers.emplace_back(p);
    total += readers.back().num_positions();
  }
  Progress progress("positions loaded", total, !options.quiet && stderr_is_terminal());
  std::vector<int8_t> planes(SLICE * encode::POSITION_SIZE);
  std::vector<uint8_t> masks(SLICE * encode::MOVE_INDICES);
  int64_t game_offset = 0;
  uint64_t done = 0;
  for (const auto& reader : readers) {
    const uint64_t n = reader.num_positions();
    for (uint64_t start = 0; start < n; start += SLICE) {
      if (options.max_rows && out.size() >= options.max_rows) break;
      const uint64_t count = std::min(SLICE, n - start);
      reader.read_positions(start, count, planes.data());
      reader.read_legal_moves(start, count, masks.data());
      const auto games = reader.read_row_column(data::GAME, start, count);
      const auto plies = reader.read_row_column(data::PLY, start, count);
      for (uint64_t i = 0; i < count; ++i) {
        if (options.max_ply >= 0 && plies[i] > options.max_ply) continue;
        if (options.max_rows && out.size() >= options.max_rows) break;
        const int8_t* p = &planes[i * encode::POSITION_SIZE];
        out.side.push_back(p[0] > 0 ? 1 : -1);
        for (int s = 0; s < 64; ++s) {
          int8_t code = 0;
          for (int t = 1; t < encode::PLANES; ++t)
            if (p[t * 64 + s]) code = int8_t(p[t * 64 + s] * t);
          out.squares.push_back(code);
        }
        // Masks are almost all zeros: skip them eight bytes at a time.
        const uint8_t* m = &masks[i * encode::MOVE_INDICES];
        for (int k = 0; k < encode::MOVE_INDICES; k += 8) {
          uint64_t word;
          std::memcpy(&word, m + k, 8);
          if (!word) continue;
          for (int j = k; j < k + 8; ++j)
            if (m[j]) out.legal.push_back(uint16_t(j));
        }
        out.legal_begin.push_back(out.legal.size());
        out.game.push_back(game_offset + games[i]);
        out.ply.push_back(int32_t(plies[i]));
        out.in_check.push_back(side_to_move_in_check(&out.squares[out.squares.size() - 64], out.side.back()));
      }
      done += count;
      progress.update(done);
    }
    game_offset += int64_t(reader.num_games());
  }
  return out;
}

void split_by_game(const CompactPositions& all, double fraction, uint64_t seed, CompactPositions& train,
                   CompactPositions& validation) {
  for (size_t r = 0; r < all.size(); ++r) {
    GameRng rng(seed ^ 0x5eed5011177ULL, uint64_t(all.game[r]));
    (rng.uniform() < fraction ? validation : train).append_row(all, r);
  }
}

}  // namespace legalnet::nn
