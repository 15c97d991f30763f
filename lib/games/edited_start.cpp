#include "games/edited_start.h"

#include "chess/game_end.h"
#include "chess/legal_edits.h"
#include "chess/movegen.h"

namespace legalnet {

chess::Position random_edited_position(GameRng& rng) {
  chess::Position pos{chess::START_FEN};
  const int plies = int(rng.below(EDITED_MAX_PLY));
  for (int ply = 0; ply < plies; ++ply) {
    const chess::MoveList legal(pos);
    if (chess::termination(pos, legal.size()) != chess::Termination::NONE) break;
    pos.do_move(legal[int(rng.below(uint32_t(legal.size())))]);
  }
  const int edits = 1 + int(rng.below(EDITED_MAX_EDITS));
  for (int e = 0; e < edits; ++e) {
    std::optional<chess::Position> next = chess::random_edit(pos, rng);
    if (!next) break;
    pos = std::move(*next);
  }
  return pos;
}

}  // namespace legalnet
