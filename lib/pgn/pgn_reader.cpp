#include "pgn/pgn_reader.h"

#include <cstring>

#include "chess/notation.h"
#include "util/error.h"

namespace legalnet {
namespace {

bool is_result(std::string_view t) { return t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*"; }

// A token that is only a move number: "12.", "12...", "12" (without dots it is not a move).
bool is_move_number(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == 0) return false;
  while (i < t.size() && t[i] == '.') ++i;
  return i == t.size();
}

// Characters that end a movetext token (std::strchr would also match the NUL byte).
bool ends_token(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '{':
    case '}':
    case '(':
    case ')':
    case ';': return true;
    default: return false;
  }
}

// Annotation glyphs written apart from the move: "!", "?!", etc.
bool is_annotation(std::string_view t) { return t.find_first_not_of("!?") == std::string_view::npos; }

}  // namespace

std::string_view PgnGame::tag(std::string_view name) const {
  for (const auto& [n, v] : tags)
    if (n == name) return v;
  return {};
}

PgnReader::PgnReader(const std::string& path) : input_(path), buffer_(1 << 18) {}

void PgnReader::syntax_error(const std::string& what) const {
  throw Error(path() + ":" + std::to_string(line_number_) + ": " + what);
}

bool PgnReader::read_line(std::string& line) {
  if (has_pending_) {
    has_pending_ = false;
    line = std::move(pending_);
    ++line_number_;
    return true;
  }
  line.clear();
  for (;;) {
    if (pos_ == end_) {
      end_ = input_.read(buffer_.data(), buffer_.size());
      pos_ = 0;
      if (end_ == 0) {
        if (line.empty()) return false;
        break;
      }
    }
    const char* start = buffer_.data() + pos_;
    const void* nl = std::memchr(start, '\n', end_ - pos_);
    if (nl) {
      const size_t n = size_t(static_cast<const char*>(nl) - start);
      line.append(start, n);
      pos_ += n + 1;
      break;
    }
    line.append(start, end_ - pos_);
    pos_ = end_;
  }
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_number_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  return true;
}

bool PgnReader::next(PgnGame& game) {
  game.tags.clear();
  game.sans.clear();
  game.san_lines.clear();
  game.result.clear();
  game.first_line = 0;

  std::string line;
  bool in_movetext = false;
  int comment_depth = 0;    // inside {...}
  int variation_depth = 0;  // inside (...)
  int comment_start = 0;
  while (read_line(line)) {
    if (comment_depth == 0 && !line.empty() && line[0] == '%') continue;  // escape line
    size_t i = 0;
    if (comment_depth == 0 && variation_depth == 0) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size()) continue;
      if (line[i] == '[') {
        if (in_movetext) {  // a new game starts before this one had a result
          pending_ = std::move(line);
          has_pending_ = true;
          --line_number_;
          break;
        }
        const size_t name_end = line.find_first_of(" \t\"]", i + 1);
        const size_t open = line.find('"', i);
        if (name_end == std::string::npos || open == std::string::npos) syntax_error("malformed tag: " + line);
        std::string value;
        size_t j = open + 1;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) ++j;
          value += line[j];
        }
        if (j == line.size()) syntax_error("unterminated tag value: " + line);
        if (!game.first_line) game.first_line = line_number_;
        game.tags.emplace_back(line.substr(i + 1, name_end - i - 1), std::move(value));
        continue;
      }
    }
    if (!game.first_line) game.first_line = line_number_;
    in_movetext = true;
    // Movetext tokens.
    while (i < line.size()) {
      const char c = line[i];
      if (comment_depth > 0) {
        if (c == '}') --comment_depth;
        ++i;
        continue;
      }
      if (c == '{') {
        comment_depth = 1;
        comment_start = line_number_;
        ++i;
        continue;
      }
      if (c == ';') break;  // rest-of-line comment
      if (c == '(') {
        ++variation_depth;
        ++i;
        continue;
      }
      if (c == ')') {
        if (variation_depth > 0) --variation_depth;
        ++i;
        continue;
      }
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (c == '}') {  // a stray closing brace: skip it
        ++i;
        continue;
      }
      size_t j = i + 1;  // c is none of the delimiters handled above
      while (j < line.size() && !ends_token(line[j])) ++j;
      std::string_view token(line.data() + i, j - i);
      i = j;
      if (variation_depth > 0) continue;
      if (token[0] == '$') continue;  // NAG
      if (is_result(token)) {
        game.result = std::string(token);
        game.number = ++games_;
        return true;
      }
      if (is_move_number(token) || is_annotation(token)) continue;
      // "1.e4" and "1...e5": a move number glued to the move.
      const size_t dots = token.find_last_of('.');
      if (dots != std::string_view::npos && token[0] >= '0' && token[0] <= '9') token.remove_prefix(dots + 1);
      game.sans.emplace_back(token);
      game.san_lines.push_back(line_number_);
    }
  }
  if (comment_depth > 0) {
    line_number_ = comment_start;
    syntax_error("comment '{' never closed");
  }
  if (!in_movetext && game.tags.empty()) return false;
  game.number = ++games_;
  return true;
}

ReplayedGame replay_pgn_game(const PgnGame& game, const PlyVisitor& visit) {
  ReplayedGame r;
  const std::string_view fen = game.tag("FEN");
  if (!fen.empty()) {
    try {
      r.start = chess::Position(fen);
    } catch (const Error& e) {
      r.error = "line " + std::to_string(game.first_line) + ": FEN tag: " + e.what();
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
      break;
    }
  }
  r.end = std::move(pos);
  return r;
}

}  // namespace legalnet
