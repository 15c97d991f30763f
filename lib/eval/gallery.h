// Boards of a model's mistakes, chosen to teach: the held-out positions with the most
// probability on illegal moves, and the positions of illegal picks in games, grouped by why the
// move is illegal. Each board shows the illegal move in red and the legal moves the model
// missed in blue; the FENs go into the report so that anyone can reproduce them. No torch.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "eval/anatomy.h"

namespace legalnet::eval {

struct Mistake {
  std::string fen;
  int move = -1;            // the illegal move index (from*64+to), drawn in red
  float probability = 0;    // the model's probability of it
  int reason = 0;           // FalsePositiveReason, from the error anatomy
  double illegal_mass = 0;  // the share of the model's probability on illegal moves
  std::vector<int> missed;  // legal moves the model put below the threshold
  std::string where;        // "row 1234 of test.h5", "game 17, ply 42"
};

struct MistakeGroup {
  std::string name;   // file stem: "most-illegal-mass", "illegal-picks-king-safety"
  std::string title;  // one line for the picture and the report
  std::vector<Mistake> mistakes;
};

class Gallery {
 public:
  explicit Gallery(size_t per_group = 9, float threshold = 0.5f) : per_group_(per_group), threshold_(threshold) {}

  // A held-out position: kept while among the per_group with the most illegal mass.
  void add_position(const chess::Position& pos, const chess::MoveList& legal, const float* probs,
                    const std::string& where);
  // An illegal pick in a game: the first per_group of each reason are kept.
  void add_illegal_pick(const chess::Position& pos, int index, const float* probs, const std::string& where);

  // The groups that hold a mistake, most illegal mass first, then the picks by reason.
  std::vector<MistakeGroup> groups() const;

 private:
  Mistake describe(const chess::Position& pos, const chess::MoveList& legal, int index, const float* probs,
                   const std::string& where) const;
  size_t per_group_;
  float threshold_;
  std::vector<Mistake> by_mass_;  // a min-heap on illegal_mass while collecting
  std::array<std::vector<Mistake>, REASON_NB> picks_;
};

// Every file name a gallery may write (each group's name + ".svg"), whichever groups a run
// fills: an input under one of them is refused before the run, not replaced after it.
std::vector<std::string> gallery_file_names();

// One image per group: a grid of boards, each with its caption line.
std::string gallery_svg(const MistakeGroup& group);

}  // namespace legalnet::eval
