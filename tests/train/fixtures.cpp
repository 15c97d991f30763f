#include "train/fixtures.h"

#include "run/gen_moves/gen_moves.h"
#include "run/tensorize/tensorize.h"
#include "support/helpers.h"

namespace legalnet::test {

nn::ModelConfig config(const std::string& kind, int hidden, int blocks, int channels) {
  nn::ModelConfig c;
  c.inputs = encode::InputKind::PLANES;
  c.kind = nn::parse_model_kind(kind);
  c.hidden = hidden;
  c.blocks = blocks;
  c.channels = channels;
  return c.resolved();
}

train::RowWeights weights_of(int check, int rare, int pin) {
  return train::RowWeights{}
      .raise(chess::SIT_IN_CHECK, check)
      .raise(chess::SIT_CASTLING, rare)
      .raise(chess::SIT_EN_PASSANT, rare)
      .raise(chess::SIT_PINNED_PIECE, pin);
}

const std::string& tiny_dataset() {
  static const std::string path = [] {
    const std::string dir = temp_dir("nn");
    run::GenMovesOptions g;
    g.games = 6;
    g.seed = 21;
    g.out = dir + "/g.pgn";
    g.quiet = true;
    run::run_gen_moves(g);
    run::TensorizeOptions t;
    t.pgn_files = {g.out};
    t.out = dir + "/d.h5";
    t.quiet = true;
    run::run_tensorize(t);
    return t.out;
  }();
  return path;
}

train::CompactPositions first_rows(uint64_t max_rows) {
  train::LoadOptions load;
  load.quiet = true;
  load.max_rows = max_rows;
  return train::load_positions({tiny_dataset()}, load);
}

}  // namespace legalnet::test
