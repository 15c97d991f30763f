// Starts off the random games' path but near it (gen_moves --start edited): a position of a
// random game, then a few legal edits (chess/legal_edits.h), as evaluate's position search steps
// from a start. Games from such starts put the search's neighbourhood into the training data.
#pragma once

#include "chess/position.h"
#include "util/rng.h"

namespace legalnet {

// The position after a random game's first 0..EDITED_MAX_PLY-1 plies (uniform; the game's last
// position when it ends sooner), then 1..EDITED_MAX_EDITS random legal edits, all from rng.
constexpr int EDITED_MAX_PLY = 300;
constexpr int EDITED_MAX_EDITS = 8;
chess::Position random_edited_position(GameRng& rng);

}  // namespace legalnet
