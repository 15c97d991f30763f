#include "encode/inputs.h"

#include <cstdlib>
#include <cstring>

#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "util/error.h"
#include "util/text.h"

namespace legalnet::encode {
namespace {

constexpr InputSpec SPECS[INPUT_KIND_NB] = {
    {InputKind::PLANES, "planes", PLANES, false, false, "the predecessor's 7 planes (no castling, no en passant)"},
    {InputKind::ATTACKS, "attacks", PLANES + ATTACK_PLANES, false, true,
     "7 planes + attacked squares, pins and check lines from the move generator"},
    {InputKind::STATE, "state", STATE_PLANES, true, false,
     "the whole position (pieces, castling rights, en passant) from the mover's side, nothing derived"},
    {InputKind::STATE_ATTACKS, "state+attacks", STATE_PLANES + ATTACK_PLANES, true, true,
     "state + attacked squares, pins and check lines from the move generator"},
};

// The predecessor's 7 planes as floats (encode_planes's layout).
void write_board_planes(const BoardState& s, float* out) {
  for (int i = 0; i < PLANE_SIZE; ++i) out[i] = float(s.side);
  std::memset(out + PLANE_SIZE, 0, sizeof(float) * (POSITION_SIZE - PLANE_SIZE));
  for (int sq = 0; sq < 64; ++sq)
    if (s.squares[sq]) out[std::abs(s.squares[sq]) * PLANE_SIZE + sq] = s.squares[sq] > 0 ? 1.0f : -1.0f;
}

void write_state_planes(const BoardState& s, float* out) {
  std::memset(out, 0, sizeof(float) * STATE_PLANES * PLANE_SIZE);
  const bool white = s.side > 0;
  const int flip = white ? 0 : 56;
  for (int sq = 0; sq < 64; ++sq) {
    const int code = s.squares[sq];
    if (!code) continue;
    const bool ours = (code > 0) == white;
    out[((ours ? 0 : 6) + std::abs(code) - 1) * PLANE_SIZE + (sq ^ flip)] = 1.0f;
  }
  const uint8_t ours_oo = white ? chess::WHITE_OO : chess::BLACK_OO,
                ours_ooo = white ? chess::WHITE_OOO : chess::BLACK_OOO;
  const uint8_t theirs_oo = white ? chess::BLACK_OO : chess::WHITE_OO,
                theirs_ooo = white ? chess::BLACK_OOO : chess::WHITE_OOO;
  const uint8_t rights[4] = {ours_oo, ours_ooo, theirs_oo, theirs_ooo};
  for (int k = 0; k < 4; ++k)
    if (s.castling & rights[k])
      for (int i = 0; i < PLANE_SIZE; ++i) out[(12 + k) * PLANE_SIZE + i] = 1.0f;
  if (s.en_passant >= 0 && s.en_passant < 64) out[16 * PLANE_SIZE + (s.en_passant ^ flip)] = 1.0f;
  for (int i = 0; i < PLANE_SIZE; ++i) out[17 * PLANE_SIZE + i] = 1.0f;
}

}  // namespace

void write_attack_planes(const BoardState& s, bool mover_frame, float* out) {
  int8_t attacks[ATTACK_PLANES * PLANE_SIZE];
  encode_attack_planes(s.squares, s.side, attacks);
  const int flip = mover_frame && s.side < 0 ? 56 : 0;
  for (int p = 0; p < ATTACK_PLANES; ++p)
    for (int sq = 0; sq < 64; ++sq) out[p * PLANE_SIZE + (sq ^ flip)] = attacks[p * PLANE_SIZE + sq];
}

int rule_target_planes(RuleTargets targets) {
  return targets == RuleTargets::LINES ? RULE_LINE_PLANES : targets == RuleTargets::ATTACK_PLANES ? ATTACK_PLANES : 0;
}

void write_rule_targets(RuleTargets targets, const BoardState& s, bool mover_frame, float* out) {
  if (targets == RuleTargets::ATTACK_PLANES) return write_attack_planes(s, mover_frame, out);
  if (targets != RuleTargets::LINES) return;
  int8_t lines[RULE_LINE_PLANES * PLANE_SIZE];
  encode_rule_line_planes(s.squares, s.side, mover_frame && s.side < 0, lines);
  for (int i = 0; i < RULE_LINE_PLANES * PLANE_SIZE; ++i) out[i] = lines[i];
}

const InputSpec& input_spec(InputKind kind) { return SPECS[static_cast<int>(kind)]; }

InputKind parse_input_kind(std::string_view name) {
  for (const auto& spec : SPECS)
    if (name == spec.name) return spec.kind;
  throw Error("unknown inputs '" + printable(name) + "' (expected " + input_kind_choices() + ")");
}

std::string input_kind_choices() {
  std::string out;
  for (const auto& spec : SPECS) out += (out.empty() ? "" : " | ") + std::string(spec.name);
  return out;
}

BoardState BoardState::of(const chess::Position& pos) {
  BoardState s;
  for (int sq = 0; sq < 64; ++sq) {
    const chess::Piece p = pos.piece_on(chess::Square(sq));
    s.squares[sq] = p == chess::NO_PIECE
                        ? int8_t(0)
                        : int8_t(chess::color_of(p) == chess::WHITE ? chess::type_of(p) : -chess::type_of(p));
  }
  s.side = pos.side_to_move() == chess::WHITE ? 1 : -1;
  s.castling = pos.castling_rights();
  s.en_passant = pos.ep_square() == chess::SQ_NONE ? int8_t(-1) : int8_t(pos.ep_square());
  return s;
}

void write_inputs(InputKind kind, const BoardState& s, float* out) {
  switch (kind) {
    case InputKind::PLANES: write_board_planes(s, out); return;
    case InputKind::ATTACKS:
      write_board_planes(s, out);
      write_attack_planes(s, false, out + POSITION_SIZE);
      return;
    case InputKind::STATE: write_state_planes(s, out); return;
    case InputKind::STATE_ATTACKS:
      write_state_planes(s, out);
      write_attack_planes(s, true, out + STATE_PLANES * PLANE_SIZE);
      return;
  }
}

void write_targets(InputKind kind, int side, const uint16_t* begin, const uint16_t* end, float* out) {
  std::memset(out, 0, sizeof(float) * MOVE_INDICES);
  for (const uint16_t* i = begin; i < end; ++i) out[network_index(kind, side, *i)] = 1.0f;
}

void to_board_order(InputKind kind, int side, const float* in, float* out) {
  if (network_index(kind, side, 0) == 0) {
    std::memcpy(out, in, sizeof(float) * MOVE_INDICES);
    return;
  }
  for (int i = 0; i < MOVE_INDICES; ++i) out[network_index(kind, side, i)] = in[i];
}

}  // namespace legalnet::encode
