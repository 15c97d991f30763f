#include <cctype>
#include <string>

#include "chess/notation.h"
#include "pgn/pgn_reader.h"
#include "util/error.h"
#include "util/text.h"

namespace legalnet {
namespace {

// The Variant tag's values that mean standard chess (compared lowercase, without spaces or dashes).
std::string variant_key(std::string_view variant) {
  std::string v;
  for (char c : variant)
    if (c != ' ' && c != '-' && c != '_') v += char(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

bool is_standard_variant(std::string_view variant) {
  const std::string v = variant_key(variant);
  return v.empty() || v == "standard" || v == "chess" || v == "normal" || v == "fromposition";
}

std::string variant_name(std::string_view variant) {
  const std::string v = variant_key(variant);
  if (v == "chess960" || v == "fischerandom" || v == "fischerrandom" || v == "960") return "Chess960";
  return printable(variant, 40);
}

}  // namespace

ReplayedGame replay_pgn_game(const PgnGame& game, const PlyVisitor& visit) {
  ReplayedGame r;
  if (!game.error.empty()) {
    r.error = "line " + std::to_string(game.error_line) + ": " + game.error;
    r.skip_reason = skip_reason::SYNTAX;
    return r;
  }
  if (const std::string_view variant = game.tag("Variant"); !is_standard_variant(variant)) {
    r.skip_reason = "variant " + variant_name(variant);
    r.error = "line " + std::to_string(game.tag_line("Variant")) + ": a " + variant_name(variant) +
              " game (Variant tag), not standard chess";
    return r;
  }
  const std::string_view fen = game.tag("FEN");
  if (!fen.empty()) {
    try {
      std::string dropped;
      r.start = chess::Position(fen, &dropped);
      if (!dropped.empty()) r.note = "FEN tag: " + chess::castling_dropped_note(dropped);
    } catch (const Error& e) {
      r.error = "line " + std::to_string(game.tag_line("FEN")) + ": FEN tag: " + e.what();
      r.skip_reason =
          std::string(e.what()).find("Chess960") != std::string::npos ? "variant Chess960" : skip_reason::FEN_TAG;
      return r;
    }
  }
  chess::Position pos = r.start;
  r.moves.reserve(game.sans.size());
  for (size_t i = 0; i < game.sans.size(); ++i) {
    try {
      const chess::MoveList legal(pos);
      const chess::Move m = chess::parse_san(pos, game.sans[i], legal);
      if (visit) visit(pos, legal, m);
      pos.do_move(m);
      r.moves.push_back(m);
    } catch (const Error& e) {
      r.error = "line " + std::to_string(game.san_lines[i]) + ", ply " + std::to_string(i + 1) + ": " + e.what();
      r.skip_reason = skip_reason::MOVE;
      break;
    }
  }
  r.end = std::move(pos);
  return r;
}

}  // namespace legalnet
