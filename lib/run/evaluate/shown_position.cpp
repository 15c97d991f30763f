#include "run/evaluate/shown_position.h"

#include "chess/notation.h"
#include "encode/encode.h"
#include "eval/picture.h"
#include "util/console.h"
#include "util/error.h"

namespace legalnet::run {

std::optional<chess::Position> read_shown_position(const EvaluateOptions& o) {
  if (o.fen.empty()) return std::nullopt;
  std::optional<chess::Position> shown;
  std::string dropped;  // void castling rights are dropped, as python-chess reads them
  try {
    shown.emplace(o.fen == "startpos" ? chess::START_FEN : std::string_view(o.fen), &dropped);
  } catch (const Error& e) {
    throw Error(std::string("--fen: ") + e.what());
  }
  if (!dropped.empty()) say("evaluate: note: {}\n", chess::castling_dropped_note(dropped));
  return shown;
}

ShownPosition show_position(const EvaluatedNet& net, const chess::Position& pos, const EvaluateOptions& o,
                            Outputs& outputs) {
  const std::vector<float> probs = net.predict(std::vector<const chess::Position*>{&pos});
  const encode::LegalMask legal{chess::MoveList(pos)};
  const std::vector<int> order = encode::top_indices(probs.data(), o.top_k);
  ShownPosition shown{.fen = pos.fen(), .top_moves = {}};
  for (const int index : order) shown.top_moves.push_back({index, probs[size_t(index)], bool(legal[index])});
  if (!o.picture.empty())
    eval::write_picture(o.picture, eval::position_svg(pos, probs.data(), int(order.size())), outputs);
  return shown;
}

}  // namespace legalnet::run
