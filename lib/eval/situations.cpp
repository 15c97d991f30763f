#include "eval/situations.h"

#include <cmath>

#include "encode/encode.h"
#include "eval/games.h"

namespace legalnet::eval {

using namespace chess;

std::pair<double, double> SituationRow::illegal_mass_interval() const {
  if (positions == 0) return {0.0, 0.0};
  const double n = double(positions), mean = illegal_mass / n;
  const double variance = positions > 1 ? std::max(0.0, (illegal_mass_squares - n * mean * mean) / (n - 1)) : 0.0;
  const double half = 1.96 * std::sqrt(variance / n);
  return {std::max(0.0, mean - half), std::min(1.0, mean + half)};
}

SituationCard::Scored SituationCard::score(const Position& pos, const MoveList& legal, const float* probs,
                                           float threshold, double uniform) {
  const encode::LegalMask is_legal(legal);
  Scored s;
  s.exact = encode::exact_set(probs, is_legal, threshold);
  double total = 0;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) total += probs[i];
  s.none = legal.size() == 0;
  s.illegal = s.none ? std::min(total, 1.0) : encode::illegal_share(probs, is_legal);
  s.picked_illegal = !s.none && !is_legal[pick_index(probs, false, uniform)];
  s.situations = situations_of(pos, legal);
  return s;
}

void SituationCard::add(const Scored& scored) {
  for (int s = 0; s < SITUATION_NB; ++s) {
    if (!(scored.situations & (1u << s))) continue;
    SituationRow& row = rows[size_t(s)];
    ++row.positions;
    row.exact_sets += scored.exact;
    row.illegal_mass += scored.illegal;
    row.illegal_mass_squares += scored.illegal * scored.illegal;
    if (!scored.none) {
      ++row.sampled_illegal.total;
      row.sampled_illegal.count += scored.picked_illegal;
    }
  }
}

}  // namespace legalnet::eval
