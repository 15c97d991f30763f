#include "encode/inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "chess/movegen.h"
#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet::encode {
namespace {

using chess::Position;

std::vector<float> inputs_of(InputKind kind, const Position& pos) {
  std::vector<float> out(size_t(input_spec(kind).planes) * PLANE_SIZE);
  write_inputs(kind, BoardState::of(pos), out.data());
  return out;
}

float at(const std::vector<float>& in, int plane, int square) { return in[size_t(plane * PLANE_SIZE + square)]; }

// The same position with the colours swapped and the board turned over (ranks flipped).
std::string colour_mirror(const std::string& fen) {
  std::vector<std::string> fields;
  for (size_t start = 0, end; start != std::string::npos; start = end == std::string::npos ? end : end + 1) {
    end = fen.find(' ', start);
    fields.push_back(fen.substr(start, end == std::string::npos ? end : end - start));
  }
  std::vector<std::string> ranks;
  for (size_t start = 0, end; start != std::string::npos; start = end == std::string::npos ? end : end + 1) {
    end = fields[0].find('/', start);
    ranks.push_back(fields[0].substr(start, end == std::string::npos ? end : end - start));
  }
  std::reverse(ranks.begin(), ranks.end());
  std::string board;
  for (const auto& rank : ranks) {
    if (!board.empty()) board += '/';
    for (char c : rank) board += std::isalpha(static_cast<unsigned char>(c)) ? char(c ^ 0x20) : c;
  }
  std::string castling;
  for (char c : std::string("KQkq"))
    if (fields[2].find(char(c ^ 0x20)) != std::string::npos) castling += c;
  std::string ep = fields[3];
  if (ep != "-") ep[1] = ep[1] == '3' ? '6' : '3';
  return board + (fields[1] == "w" ? " b " : " w ") + (castling.empty() ? "-" : castling) + " " + ep + " " + fields[4] +
         " " + fields[5];
}

TEST(Inputs, KindsHaveOneNameAndOneSize) {
  for (int k = 0; k < INPUT_KIND_NB; ++k) {
    const InputSpec& spec = input_spec(InputKind(k));
    EXPECT_EQ(int(spec.kind), k);
    EXPECT_EQ(parse_input_kind(spec.name), spec.kind);
  }
  EXPECT_EQ(input_spec(InputKind::PLANES).planes, 7);
  EXPECT_EQ(input_spec(InputKind::ATTACKS).planes, 10);
  EXPECT_EQ(input_spec(InputKind::STATE).planes, 18);
  EXPECT_EQ(input_spec(InputKind::STATE_ATTACKS).planes, 21);
  EXPECT_FALSE(input_spec(InputKind::STATE).from_move_generator);
  EXPECT_FALSE(input_spec(InputKind::PLANES).from_move_generator);
  EXPECT_TRUE(input_spec(InputKind::ATTACKS).from_move_generator);
  EXPECT_TRUE(input_spec(InputKind::STATE_ATTACKS).from_move_generator);
  try {
    parse_input_kind("pictures");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown inputs 'pictures' (expected planes | attacks | state | state+attacks)");
  }
}

// The board frame kinds write what the dataset's planes hold, as floats.
TEST(Inputs, PlanesAreTheDatasetPlanes) {
  for (const auto& fen : test::sample_fens(/*seed=*/5, 300)) {
    const Position pos(fen);
    int8_t planes[POSITION_SIZE];
    encode_planes(pos, planes);
    const auto in = inputs_of(InputKind::ATTACKS, pos);
    for (int i = 0; i < POSITION_SIZE; ++i) ASSERT_EQ(in[size_t(i)], float(planes[i])) << fen;
    int8_t squares[64], attacks[ATTACK_PLANES * PLANE_SIZE];
    square_codes(planes, squares);
    encode_attack_planes(squares, planes[0], attacks);
    for (int i = 0; i < ATTACK_PLANES * PLANE_SIZE; ++i)
      ASSERT_EQ(in[size_t(POSITION_SIZE + i)], float(attacks[i])) << fen;
  }
}

// The state planes hold the position and its rights: pieces by owner from the mover's side, a
// castling move is legal only where its right's plane is set, and the en-passant plane marks
// the target square of the legal en-passant captures and nothing else.
TEST(Inputs, StatePlanesAgreeWithTheMoveGenerator) {
  int castles = 0, en_passants = 0;
  for (const auto& fen : test::sample_fens(/*seed=*/7, 3000)) {
    const Position pos(fen);
    const auto in = inputs_of(InputKind::STATE, pos);
    const bool white = pos.side_to_move() == chess::WHITE;
    const int flip = white ? 0 : 56;
    for (int sq = 0; sq < 64; ++sq) {
      const chess::Piece p = pos.piece_on(chess::Square(sq));
      for (int plane = 0; plane < 12; ++plane) {
        const bool expected = p != chess::NO_PIECE && (chess::color_of(p) == pos.side_to_move()) == (plane < 6) &&
                              int(chess::type_of(p)) == plane % 6 + 1;
        ASSERT_EQ(at(in, plane, sq ^ flip), expected ? 1.0f : 0.0f) << fen << " plane " << plane;
      }
      ASSERT_EQ(at(in, 17, sq), 1.0f);
    }
    std::set<int> ep_targets;
    bool oo = false, ooo = false;
    for (chess::Move m : chess::MoveList(pos)) {
      if (m.kind() == chess::MoveKind::EN_PASSANT) ep_targets.insert(m.to() ^ flip);
      if (m.kind() == chess::MoveKind::CASTLING) (m.to() > m.from() ? oo : ooo) = true;
    }
    // Rights are constant planes; a legal castling move needs its right.
    for (int k = 0; k < 4; ++k)
      for (int sq = 1; sq < 64; ++sq) ASSERT_EQ(at(in, 12 + k, sq), at(in, 12 + k, 0));
    if (oo) {
      ASSERT_EQ(at(in, 12, 0), 1.0f) << fen;
    }
    if (ooo) {
      ASSERT_EQ(at(in, 13, 0), 1.0f) << fen;
    }
    const uint8_t rights = pos.castling_rights();
    EXPECT_EQ(at(in, 12, 0), (rights & (white ? chess::WHITE_OO : chess::BLACK_OO)) ? 1.0f : 0.0f);
    EXPECT_EQ(at(in, 15, 0), (rights & (white ? chess::BLACK_OOO : chess::WHITE_OOO)) ? 1.0f : 0.0f);
    for (int sq = 0; sq < 64; ++sq) ASSERT_EQ(at(in, 16, sq), ep_targets.count(sq) ? 1.0f : 0.0f) << fen;
    castles += oo || ooo;
    en_passants += !ep_targets.empty();
  }
  EXPECT_GT(castles, 50);
  EXPECT_GT(en_passants, 10);
}

// The mover's frame makes a position and its colour mirror the same input, with the same
// legal moves in the network's indices: what is learned for white holds for black.
TEST(Inputs, AColourMirrorGivesTheSameStateAndMoves) {
  for (const auto& fen : test::sample_fens(/*seed=*/11, 1000)) {
    const Position pos(fen), mirror(colour_mirror(fen));
    for (InputKind kind : {InputKind::STATE, InputKind::STATE_ATTACKS})
      ASSERT_EQ(inputs_of(kind, pos), inputs_of(kind, mirror)) << fen << " / " << mirror.fen();
    auto network_moves = [](const Position& p) {
      std::set<int> out;
      const int side = p.side_to_move() == chess::WHITE ? 1 : -1;
      for (chess::Move m : chess::MoveList(p)) out.insert(network_index(InputKind::STATE, side, move_index(m)));
      return out;
    };
    ASSERT_EQ(network_moves(pos), network_moves(mirror)) << fen;
  }
}

TEST(Inputs, TargetsAndBoardOrderAreTheSameMap) {
  const Position pos("r3k2r/ppp1qppp/8/3pP3/8/8/PPPQ1PPP/R3K2R w KQkq d6 0 9");
  const Position black("r3k2r/pppq1ppp/8/8/3pP3/8/PPPQ1PPP/R3K2R b KQkq e3 0 9");
  for (const Position* p : {&pos, &black}) {
    const chess::MoveList legal(*p);
    std::vector<uint16_t> indices;
    for (chess::Move m : legal) indices.push_back(uint16_t(move_index(m)));
    const int side = p->side_to_move() == chess::WHITE ? 1 : -1;
    for (int k = 0; k < INPUT_KIND_NB; ++k) {
      const InputKind kind = InputKind(k);
      std::vector<float> target(MOVE_INDICES), board(MOVE_INDICES);
      write_targets(kind, side, indices.data(), indices.data() + indices.size(), target.data());
      to_board_order(kind, side, target.data(), board.data());
      for (int i = 0; i < MOVE_INDICES; ++i)
        ASSERT_EQ(board[size_t(i)], std::count(indices.begin(), indices.end(), i) ? 1.0f : 0.0f)
            << input_spec(kind).name;
      for (int i = 0; i < MOVE_INDICES; ++i) ASSERT_EQ(network_index(kind, side, network_index(kind, side, i)), i);
    }
  }
  // Black's e7e5 is the mover's e2e4 in the mover's frame; white's moves keep their index.
  EXPECT_EQ(network_index(InputKind::STATE, -1, chess::SQ_E7 * 64 + chess::SQ_E5), chess::SQ_E2 * 64 + chess::SQ_E4);
  EXPECT_EQ(network_index(InputKind::STATE, 1, chess::SQ_E2 * 64 + chess::SQ_E4), chess::SQ_E2 * 64 + chess::SQ_E4);
  EXPECT_EQ(network_index(InputKind::PLANES, -1, chess::SQ_E7 * 64 + chess::SQ_E5), chess::SQ_E7 * 64 + chess::SQ_E5);
}

}  // namespace
}  // namespace legalnet::encode

namespace legalnet::encode {
namespace {

// The rule lines (the rules head's targets with train --rule-lines), in the mover's frame, agree
// with the attack planes, the move generator and the vetoes' lines: a piece is pinned along
// exactly one line where the attack planes pin it, every legal move of a pinned piece runs along
// that line (the vetoes' line of its index in the frame, black's diagonals turned over), and
// every legal move of a piece other than the king ends on plane 5 (all squares out of check, the
// attack planes' check line in a single check, none in a double check).
TEST(RuleTargets, LinesAgreeWithTheMoveGeneratorInTheMoversFrame) {
  using namespace chess;
  int pinned_moves = 0, black_pinned_moves = 0, checks = 0;
  for (const auto& fen : test::sample_fens(/*seed=*/37, 2000)) {
    const Position pos(fen);
    const BoardState s = BoardState::of(pos);
    std::vector<float> lines(size_t(rule_target_planes(RuleTargets::LINES)) * PLANE_SIZE);
    std::vector<float> attacks(size_t(rule_target_planes(RuleTargets::ATTACK_PLANES)) * PLANE_SIZE);
    write_rule_targets(RuleTargets::LINES, s, /*mover_frame=*/true, lines.data());
    write_rule_targets(RuleTargets::ATTACK_PLANES, s, /*mover_frame=*/true, attacks.data());
    auto line = [&](int plane, int square) { return lines[size_t(plane * PLANE_SIZE + square)]; };
    auto attack = [&](int plane, int square) { return attacks[size_t(plane * PLANE_SIZE + square)]; };
    const int flip = s.side < 0 ? 56 : 0, checkers = popcount(pos.checkers());
    SCOPED_TRACE(fen);
    int allowed = 0;
    for (int sq = 0; sq < 64; ++sq) {
      ASSERT_EQ(line(0, sq), attack(0, sq));
      ASSERT_EQ(line(1, sq) + line(2, sq) + line(3, sq) + line(4, sq), attack(1, sq));
      if (checkers == 1) ASSERT_EQ(line(5, sq), attack(2, sq));
      allowed += int(line(5, sq));
    }
    if (checkers != 1) EXPECT_EQ(allowed, checkers ? 0 : 64);
    checks += checkers > 0;
    const Square king = pos.king_square(pos.side_to_move());
    for (Move m : MoveList(pos)) {
      if (m.from() == king || m.kind() == MoveKind::EN_PASSANT) continue;
      EXPECT_EQ(line(5, m.to() ^ flip), 1) << "a move off the check rule's squares";
      const int from = m.from() ^ flip;
      if (!attack(1, from)) continue;
      ++pinned_moves;
      black_pinned_moves += s.side < 0;
      const int type = move_type_of(network_index(InputKind::STATE, s.side, m.from() * 64 + m.to()));
      ASSERT_GE(type, 0);
      ASSERT_LT(type, 56) << "a pinned knight moved";
      EXPECT_EQ(line(1 + type / 7 % 4, from), 1) << "a pinned piece's move off its line";
    }
  }
  EXPECT_GT(pinned_moves, 50);
  EXPECT_GT(black_pinned_moves, 20);
  EXPECT_GT(checks, 50);
}

}  // namespace
}  // namespace legalnet::encode
