#include "pgn/pgn_writer.h"

#include <cassert>

#include "chess/movegen.h"
#include "chess/notation.h"

namespace legalnet {
namespace {

constexpr size_t LINE_WIDTH = 80;

// Collects movetext tokens into lines of at most 80 columns.
class LineWrapper {
 public:
  explicit LineWrapper(std::string& out) : out_(out), line_start_(out.size()) {}
  void token(std::string_view t) {
    const size_t line_length = out_.size() - line_start_;
    if (line_length > 0) {
      if (line_length + 1 + t.size() > LINE_WIDTH) {
        out_ += '\n';
        line_start_ = out_.size();
      } else {
        out_ += ' ';
      }
    }
    out_ += t;
  }

 private:
  std::string& out_;
  size_t line_start_;
};

}  // namespace

std::string pgn_escape(std::string_view value) {
  std::string s;
  for (char c : value) {
    if (c == '\\' || c == '"') s += '\\';
    s += c;
  }
  return s;
}

void append_pgn_game(const chess::Position& start, const std::vector<chess::Move>& moves, const PgnTags& tags,
                     std::string& out) {
  std::string_view result = "*";
  for (const auto& [name, value] : tags) {
    out += '[';
    out += name;
    out += " \"";
    out += pgn_escape(value);
    out += "\"]\n";
    if (name == "Result") result = value;
  }
  out += '\n';

  chess::Position pos = start;
  LineWrapper lines(out);
  std::string token;
  if (pos.side_to_move() == chess::BLACK && !moves.empty()) lines.token(std::to_string(pos.fullmove_number()) + "...");
  for (chess::Move m : moves) {
    token.clear();
    if (pos.side_to_move() == chess::WHITE) {
      token += std::to_string(pos.fullmove_number());
      token += '.';
      lines.token(token);
      token.clear();
    }
    const chess::MoveList legal(pos);
    assert(legal.contains(m));
    chess::append_san_body(pos, m, legal, token);
    pos.do_move(m);
    if (pos.in_check()) token += chess::MoveList(pos).empty() ? '#' : '+';
    lines.token(token);
  }
  lines.token(result);
  out += "\n\n";
}

}  // namespace legalnet
