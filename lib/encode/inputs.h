// What a network sees: the input kinds, the one function that writes a position's input
// planes, and the frame its move indices are in. train (from dataset rows), evaluate (from
// positions) and the Python package (python/legalnet/inputs.py) follow this one table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chess/position.h"

namespace legalnet::encode {

enum class InputKind : uint8_t {
  PLANES,         // the predecessor's 7 planes (encode.h), board frame
  ATTACKS,        // PLANES + 3 planes from the move generator (attack_planes.h), board frame
  STATE,          // the whole position state in the mover's frame, nothing derived (below)
  STATE_ATTACKS,  // STATE + the 3 attack planes (mover's frame)
};
constexpr int INPUT_KIND_NB = 4;

struct InputSpec {
  InputKind kind;
  const char* name;          // as on the command line and in model files
  int planes;                // input planes of 8x8
  bool mover_frame;          // board and move indices seen from the side to move (ranks flipped for black)
  bool from_move_generator;  // holds planes computed by the rules engine (attacks, pins, checks)
  const char* description;
};

const InputSpec& input_spec(InputKind kind);
// Throws legalnet::Error naming the choices for an unknown name.
InputKind parse_input_kind(std::string_view name);
// "planes | attacks | state | state+attacks"
std::string input_kind_choices();

// The state of a position as datasets and training rows hold it.
struct BoardState {
  int8_t squares[64];  // +type white, -type black, 0 empty; square = rank * 8 + file
  int8_t side;         // +1 white to move, -1 black
  uint8_t castling;    // chess::CastlingRights bits: 1 K, 2 Q, 4 k, 8 q
  int8_t en_passant;   // the square of a legal en-passant capture's target, or -1
  static BoardState of(const chess::Position& pos);
};

// STATE's 18 planes, in the mover's frame (square s of the board is square s ^ 56 of the input
// when black moves, so the mover's pawns always advance up the ranks and its king starts on e1):
//   0-5    the mover's pawns, knights, bishops, rooks, queens, king (1 where present)
//   6-11   the opponent's, in the same order
//   12-15  castling rights, each a constant plane: the mover's O-O, O-O-O, the opponent's O-O, O-O-O
//   16     the en-passant target square (1 there) when a capture there is legal (FEN's convention
//          in python-chess and Stockfish, the dataset's `en_passant` column)
//   17     all ones (so a convolution's zero padding marks the board's edge)
// STATE_ATTACKS appends the 3 attack planes, moved into the mover's frame.
constexpr int STATE_PLANES = 18;

// The 3 attack planes of encode/attack_planes.h into out[3 * 64] as floats, moved into the mover's
// frame when `mover_frame`: what the attack input kinds append, and the rules head's targets.
void write_attack_planes(const BoardState& s, bool mover_frame, float* out);

// What a rules head learns (nn::ModelConfig::rules_head, rule_lines): nothing, the 3 attack
// planes, or the RULE_LINE_PLANES planes of attack_planes.h; rule_target_planes of them into
// out[planes * 64] as floats, in the mover's frame when `mover_frame`.
enum class RuleTargets : uint8_t { NONE, ATTACK_PLANES, LINES };
int rule_target_planes(RuleTargets targets);
void write_rule_targets(RuleTargets targets, const BoardState& s, bool mover_frame, float* out);

// Writes the input planes of `s` for `kind` to out[input_spec(kind).planes * 64] as floats,
// [plane * 64 + rank * 8 + file] in the input's frame.
void write_inputs(InputKind kind, const BoardState& s, float* out);

// The move index a network of `kind` uses for the board's index `board_index` when `side` is
// to move, and back (the map is its own inverse): the same index in the board frame, the
// ranks of both squares flipped in the mover's frame when black moves.
inline int network_index(InputKind kind, int side, int board_index) {
  constexpr int FLIP_RANKS = (56 << 6) | 56;  // from ^ 56, to ^ 56
  return side < 0 && input_spec(kind).mover_frame ? board_index ^ FLIP_RANKS : board_index;
}

// The 0/1 target of a network of `kind`: 1 at the network index of each legal board index in
// [begin, end), 0 elsewhere, into out[4096].
void write_targets(InputKind kind, int side, const uint16_t* begin, const uint16_t* end, float* out);

// A network's outputs for one position, in[4096] in its frame, into out[4096] in board order.
void to_board_order(InputKind kind, int side, const float* in, float* out);

}  // namespace legalnet::encode
