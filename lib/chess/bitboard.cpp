#include "chess/bitboard.h"

#include <cstdlib>
#include <mutex>

namespace legalnet::chess {
namespace tables {
Magic rook_magics[SQUARE_NB];
Magic bishop_magics[SQUARE_NB];
Bitboard pawn_attacks[COLOR_NB][SQUARE_NB];
Bitboard knight_attacks[SQUARE_NB];
Bitboard king_attacks[SQUARE_NB];
Bitboard between[SQUARE_NB][SQUARE_NB];
Bitboard line[SQUARE_NB][SQUARE_NB];
}  // namespace tables

namespace {

// 0x19000 rook entries and 0x1480 bishop entries: the sum over squares of 2^(mask bits).
Bitboard rook_table[0x19000];
Bitboard bishop_table[0x1480];

constexpr int ROOK_DIRS[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int BISHOP_DIRS[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

bool on_board(int file, int rank) { return file >= 0 && file < 8 && rank >= 0 && rank < 8; }

// Slider attacks computed ray by ray; used only to build the tables.
Bitboard slow_slider_attacks(const int (&dirs)[4][2], Square s, Bitboard occupied) {
  Bitboard attacks = 0;
  for (const auto& d : dirs) {
    int f = file_of(s) + d[0], r = rank_of(s) + d[1];
    while (on_board(f, r)) {
      const Bitboard b = square_bb(make_square(f, r));
      attacks |= b;
      if (occupied & b) break;
      f += d[0];
      r += d[1];
    }
  }
  return attacks;
}

Bitboard step_attacks(Square s, const int (*steps)[2], int count) {
  Bitboard attacks = 0;
  for (int i = 0; i < count; ++i) {
    const int f = file_of(s) + steps[i][0], r = rank_of(s) + steps[i][1];
    if (on_board(f, r)) attacks |= square_bb(make_square(f, r));
  }
  return attacks;
}

// xorshift64*: only used to search magics, seeded so that start-up is deterministic.
struct MagicRng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
  uint64_t sparse() { return next() & next() & next(); }
};

// Finds a magic for every square by trial, as Stockfish does. Seeding the generator per rank
// with values known to find magics quickly (Stockfish's) keeps start-up to a few milliseconds.
void init_magics(const int (&dirs)[4][2], tables::Magic* magics, Bitboard* table) {
  constexpr uint64_t SEEDS[8] = {728, 10316, 55013, 32803, 12281, 15100, 16645, 255};
  Bitboard occupancy[4096], reference[4096];
  int epoch[4096] = {}, current = 0;
  Bitboard* next_table = table;

  for (int sq = 0; sq < 64; ++sq) {
    const Square s = Square(sq);
    const Bitboard edges =
        ((RANK_1_BB | RANK_8_BB) & ~rank_bb(rank_of(s))) | ((FILE_A_BB | FILE_H_BB) & ~file_bb(file_of(s)));
    MagicRng rng{SEEDS[rank_of(s)]};
    tables::Magic& m = magics[sq];
    m.mask = slow_slider_attacks(dirs, s, 0) & ~edges;
    m.shift = 64 - popcount(m.mask);
    m.attacks = next_table;

    // Enumerate all subsets of the mask (Carry-Rippler) with their attack sets.
    int size = 0;
    Bitboard b = 0;
    do {
      occupancy[size] = b;
      reference[size] = slow_slider_attacks(dirs, s, b);
      ++size;
      b = (b - m.mask) & m.mask;
    } while (b);

    for (int i = 0; i < size;) {
      do {
        m.magic = rng.sparse();
      } while (popcount((m.magic * m.mask) >> 56) < 6);
      ++current;
      for (i = 0; i < size; ++i) {
        const unsigned idx = m.index(occupancy[i]);
        if (epoch[idx] < current) {
          epoch[idx] = current;
          next_table[idx] = reference[i];
        } else if (next_table[idx] != reference[i]) {
          break;
        }
      }
    }
    next_table += size;
  }
}

void init_all() {
  constexpr int KNIGHT_STEPS[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
  constexpr int KING_STEPS[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
  constexpr int WHITE_PAWN_STEPS[2][2] = {{-1, 1}, {1, 1}};
  constexpr int BLACK_PAWN_STEPS[2][2] = {{-1, -1}, {1, -1}};

  for (int sq = 0; sq < 64; ++sq) {
    const Square s = Square(sq);
    tables::knight_attacks[s] = step_attacks(s, KNIGHT_STEPS, 8);
    tables::king_attacks[s] = step_attacks(s, KING_STEPS, 8);
    tables::pawn_attacks[WHITE][s] = step_attacks(s, WHITE_PAWN_STEPS, 2);
    tables::pawn_attacks[BLACK][s] = step_attacks(s, BLACK_PAWN_STEPS, 2);
  }
  init_magics(ROOK_DIRS, tables::rook_magics, rook_table);
  init_magics(BISHOP_DIRS, tables::bishop_magics, bishop_table);

  for (int a = 0; a < 64; ++a) {
    for (int b = 0; b < 64; ++b) {
      const Square sa = Square(a), sb = Square(b);
      tables::between[a][b] = square_bb(sb);
      tables::line[a][b] = 0;
      if (a == b) continue;
      for (const auto* dirs : {&ROOK_DIRS, &BISHOP_DIRS}) {
        if (slow_slider_attacks(*dirs, sa, 0) & square_bb(sb)) {
          tables::line[a][b] =
              (slow_slider_attacks(*dirs, sa, 0) & slow_slider_attacks(*dirs, sb, 0)) | square_bb(sa) | square_bb(sb);
          tables::between[a][b] |=
              slow_slider_attacks(*dirs, sa, square_bb(sb)) & slow_slider_attacks(*dirs, sb, square_bb(sa));
        }
      }
    }
  }
}

}  // namespace

void init_bitboards() {
  static std::once_flag once;
  std::call_once(once, init_all);
}

}  // namespace legalnet::chess
