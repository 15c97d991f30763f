#include "pgn/pgn_reader.h"

#include <cctype>

#include "chess/notation.h"
#include "util/error.h"
#include "util/text.h"

namespace legalnet {
namespace {

// What a line over MAX_PGN_LINE_BYTES reads as: a line feed, which no line read holds.
const std::string LONG_LINE = "\n";

// The result tokens, and the draw written "1/2" or with one-half signs, read as "1/2-1/2".
std::string_view result_of(std::string_view t) {
  if (t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*") return t;
  if (t == "1/2" || t == "\xC2\xBD-\xC2\xBD") return "1/2-1/2";
  return {};
}

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
    case '[':
    case ';':
    case '\0': return true;
    default: return false;
  }
}

// Tokens that annotate rather than move: "!", "?!", an "e.p." written apart from its capture,
// and NAGs, also as some exporters escape them ("\$14").
bool is_annotation(std::string_view t) {
  return t.find_first_not_of("!?") == std::string_view::npos || t == "e.p." || t[0] == '$' ||
         (t.size() > 1 && t[0] == '\\' && t[1] == '$');
}

bool is_tag_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// A line that is one whole tag pair, `[Name "value"]`: where a comment or variation was never
// closed, such a line starts the next game.
bool is_tag_pair_line(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '[') return false;
  size_t j = i + 1;
  while (j < line.size() && is_tag_name_char(line[j])) ++j;
  if (j == i + 1 || j == line.size() || (line[j] != ' ' && line[j] != '\t')) return false;
  j = line.find_first_not_of(" \t", j);
  if (j == std::string_view::npos || line[j] != '"') return false;
  for (++j; j < line.size() && line[j] != '"'; ++j)
    if (line[j] == '\\') ++j;
  if (j >= line.size()) return false;
  j = line.find_first_not_of(" \t", j + 1);
  return j != std::string_view::npos && line[j] == ']' &&
         line.find_first_not_of(" \t", j + 1) == std::string_view::npos;
}

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

std::string_view PgnGame::tag(std::string_view name) const {
  for (const auto& [n, v] : tags)
    if (n == name) return v;
  return {};
}

int PgnGame::tag_line(std::string_view name) const {
  for (size_t i = 0; i < tags.size(); ++i)
    if (tags[i].first == name) return tag_lines[i];
  return 0;
}

PgnReader::PgnReader(const std::string& path) : input_(path), buffer_(1 << 18) {}

// Lines end at LF, CRLF or a lone CR (old Mac files). A byte-order mark at the start of any
// line is dropped: files joined with cat carry one where each began.
bool PgnReader::read_line() {
  col_ = 0;
  if (!ahead_.empty()) {
    line_ = std::move(ahead_.front());
    ahead_.pop_front();
  } else if (!read_file_line(line_)) {
    return false;
  }
  ++line_number_;
  return true;
}

// Reads the next line of the file into `out`; false at the end of the file. A line longer than
// MAX_PGN_LINE_BYTES is read to its end but kept as LONG_LINE.
bool PgnReader::read_file_line(std::string& out) {
  out.clear();
  bool any = false;
  for (;;) {
    if (pos_ == end_) {
      end_ = input_.read(buffer_.data(), buffer_.size());
      pos_ = 0;
      if (end_ == 0) {
        if (!any) return false;
        break;
      }
    }
    if (skip_lf_) {
      skip_lf_ = false;
      if (buffer_[pos_] == '\n') {
        ++pos_;
        continue;
      }
    }
    any = true;
    const char* start = buffer_.data() + pos_;
    const char* stop = buffer_.data() + end_;
    const char* p = start;
    while (p < stop && *p != '\n' && *p != '\r') ++p;
    if (out == LONG_LINE) {
      bytes_read_ += size_t(p - start);  // the rest of a long line: read past, not kept
    } else if (out.size() + size_t(p - start) > MAX_PGN_LINE_BYTES) {
      bytes_read_ += out.size() + size_t(p - start);
      out = LONG_LINE;
    } else {
      out.append(start, size_t(p - start));
    }
    pos_ += size_t(p - start);
    if (p < stop) {
      skip_lf_ = *p == '\r';
      ++pos_;
      break;
    }
  }
  bytes_read_ += (out == LONG_LINE ? 0 : out.size()) + 1;
  if (out.compare(0, 3, "\xEF\xBB\xBF") == 0) out.erase(0, 3);
  return true;
}

// Whether the comment or variation open at the current line, a line that looks like a tag
// pair, closes later, as python-chess reads PGN: a comment at the next '}' wherever it is, a
// variation at its matching ')' before a blank line (which ends a game's movetext). The
// lines read to find out are kept in ahead_ and read next. One that is still open at the end
// of the file, or MAX_LOOKAHEAD_BYTES further on, was never closed. All the looking ahead of
// a file scans at most 8 times its bytes (and 1 MiB): a file of such lines over and over
// would otherwise cost a megabyte's scan each; past that budget, a tag line begins a game.
bool PgnReader::closes_later(bool in_comment, int variation_depth) {
  size_t next = 0, bytes = 0;
  for (const std::string* line = &line_;;) {
    if (scanned_ahead_ > 8 * bytes_read_ + MAX_LOOKAHEAD_BYTES) return false;
    scanned_ahead_ += line->size() + 1;
    if (!in_comment && line != &line_) {
      if (line->find_first_not_of(" \t") == std::string::npos) return false;  // a blank line
      if (!line->empty() && (*line)[0] == '%') line = nullptr;                // an escape line
    }
    for (size_t i = 0; line && i < line->size(); ++i) {
      const char c = (*line)[i];
      if (in_comment) {
        if (c == '}') {
          in_comment = false;
          if (variation_depth == 0) return true;
        }
      } else if (c == '{') {
        in_comment = true;
      } else if (c == ';') {
        break;
      } else if (c == '(') {
        ++variation_depth;
      } else if (c == ')' && --variation_depth == 0) {
        return true;
      }
    }
    if (next == ahead_.size()) {
      std::string more;
      if (bytes > MAX_LOOKAHEAD_BYTES || !read_file_line(more)) return false;
      bytes += more.size();
      ahead_.push_back(std::move(more));
    }
    line = &ahead_[next++];
  }
}

void PgnReader::fail_game(PgnGame& game, int line, const std::string& why) const {
  if (!game.error.empty()) return;  // the first problem is the one to report
  game.error = why;
  game.error_line = line;
}

// Reads `[Name "value"]` at col_; movetext may follow on the same line.
void PgnReader::read_tag(PgnGame& game) {
  const std::string_view line = line_;
  size_t i = col_ + 1;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const size_t name_start = i;
  while (i < line.size() && is_tag_name_char(line[i])) ++i;
  const std::string name(line.substr(name_start, i - name_start));
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  auto malformed = [&](const std::string& why) {
    fail_game(game, line_number_, why + ": " + printable(line.substr(col_, 60)));
    col_ = line.size();
  };
  if (name.empty()) return malformed("malformed tag (no name)");
  if (i == line.size() || line[i] != '"') return malformed("malformed tag (no quoted value)");
  std::string value;
  for (++i; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) ++i;
    value += line[i];
  }
  if (i == line.size()) return malformed("unterminated tag value");
  ++i;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == line.size() || line[i] != ']') return malformed("tag not closed by ']'");
  col_ = i + 1;
  if (!game.first_line) game.first_line = line_number_;
  if (game.tags.size() == MAX_GAME_TAGS)
    return fail_game(game, line_number_, "more than " + std::to_string(MAX_GAME_TAGS) + " tags");
  game.tags.emplace_back(name, std::move(value));
  game.tag_lines.push_back(line_number_);
}

bool PgnReader::finish(PgnGame& game, bool numbered) {
  game.number = ++games_;
  if (numbered || !game.tags.empty() || !game.result.empty()) ++pgn_like_games_;
  return true;
}

bool PgnReader::next(PgnGame& game) {
  game = PgnGame{};
  bool in_movetext = false;  // a movetext token was read: a tag now starts the next game
  int comment_depth = 0;     // inside {...}
  int variation_depth = 0;   // inside (...)
  int open_line = 0;         // where the outermost open comment or variation began
  bool numbered = false;     // the movetext began with a move number
  for (;;) {
    if (col_ >= line_.size()) {
      if (!read_line()) break;
      if (line_ == LONG_LINE) {
        // A comment of megabytes, say: the game it is in is skipped (what it held is not kept,
        // so whatever it opened is taken as closed), and the next tag begins the next game.
        if (!game.first_line) game.first_line = line_number_;
        fail_game(game, line_number_, "a line longer than " + std::to_string(MAX_PGN_LINE_BYTES >> 20) + " MiB");
        comment_depth = variation_depth = 0;
        in_movetext = true;
        col_ = line_.size();
        continue;
      }
      // Before any PGN (a tag, a move number), a NUL byte means this is not a PGN file; after, NUL bytes
      // separate tokens as spaces do (python-chess skips them): they cost no game.
      if (pgn_like_games_ == 0 && game.tags.empty() && !numbered && line_.find('\0') != std::string::npos)
        throw Error(path() + ":" + std::to_string(line_number_) + ": binary data (a NUL byte): not a PGN file");
      if (comment_depth == 0 && !line_.empty() && line_[0] == '%') {  // escape line
        col_ = line_.size();
        continue;
      }
      if ((comment_depth > 0 || variation_depth > 0) && is_tag_pair_line(line_) &&
          !closes_later(comment_depth > 0, variation_depth)) {
        // Never closed: this line's tag begins the next game; the open one is lost.
        fail_game(game, open_line, comment_depth > 0 ? "comment '{' never closed" : "variation '(' never closed");
        return finish(game, numbered);
      }
      continue;
    }
    const char c = line_[col_];
    if (comment_depth > 0) {
      const size_t close = line_.find('}', col_);
      col_ = close == std::string::npos ? line_.size() : close + 1;
      if (close != std::string::npos) comment_depth = 0;
      continue;
    }
    switch (c) {
      case ' ':
      case '\t':
      case '\0': ++col_; continue;
      case '{':
        comment_depth = 1;
        if (variation_depth == 0) open_line = line_number_;
        ++col_;
        continue;
      case ';': col_ = line_.size(); continue;  // rest-of-line comment
      case '(':
        if (variation_depth++ == 0) open_line = line_number_;
        ++col_;
        continue;
      case ')':
        if (variation_depth > 0) --variation_depth;  // a stray one at the top level is skipped
        ++col_;
        continue;
      case '}': ++col_; continue;  // a stray closing brace
      case '[':
        if (variation_depth > 0) {
          ++col_;
          continue;
        }
        if (in_movetext) return finish(game, numbered);  // the next game begins before this one had a result
        read_tag(game);
        continue;
      default: break;
    }
    size_t j = col_ + 1;
    while (j < line_.size() && !ends_token(line_[j])) ++j;
    std::string_view token(line_.data() + col_, j - col_);
    col_ = j;
    if (variation_depth > 0) continue;
    if (!game.first_line) game.first_line = line_number_;
    if (!in_movetext) numbered = is_move_number(token);
    in_movetext = true;
    if (const std::string_view result = result_of(token); !result.empty()) {
      game.result = std::string(result);
      return finish(game, numbered);
    }
    if (is_move_number(token) || is_annotation(token)) continue;
    // "1.e4" and "1...e5": a move number glued to the move.
    const size_t dots = token.find_last_of('.');
    if (dots != std::string_view::npos && token[0] >= '0' && token[0] <= '9') token.remove_prefix(dots + 1);
    if (token.empty()) continue;
    if (game.sans.size() == MAX_GAME_PLIES) {  // read on to the game's end, keeping nothing
      fail_game(game, line_number_,
                "more than " + std::to_string(MAX_GAME_PLIES) + " moves, longer than any game under the 75-move rule");
      continue;
    }
    game.sans.emplace_back(token);
    game.san_lines.push_back(line_number_);
  }
  if (comment_depth > 0) fail_game(game, open_line, "comment '{' never closed");
  if (variation_depth > 0) fail_game(game, open_line, "variation '(' never closed");
  if (!in_movetext && game.tags.empty() && game.error.empty()) {
    if (games_ > 0 && pgn_like_games_ == 0)
      throw Error(path() + ": not PGN: no tag pair, move number or result in " + std::to_string(line_number_) +
                  " lines");
    return false;
  }
  return finish(game, numbered);
}

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
      // "FEN tag: castling rights ...": the note without its "note: ", which the tool prints
      // before the game's place.
      constexpr std::string_view NOTE = "note: ";
      if (!dropped.empty()) r.note = "FEN tag: " + chess::castling_dropped_note(dropped).substr(NOTE.size());
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
