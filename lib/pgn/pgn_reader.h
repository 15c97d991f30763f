// A streaming PGN reader for generated and real-world games (Lichess dumps): tag pairs,
// movetext with comments, NAGs, variations, move numbers, % escape lines, CRLF and a BOM.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chess/movegen.h"
#include "util/files.h"

namespace legalnet {

// One game as read, before its moves are checked.
struct PgnGame {
  std::vector<std::pair<std::string, std::string>> tags;
  std::vector<std::string> sans;  // main-line moves, as written
  std::vector<int> san_lines;     // the line of each move in the file
  std::string result;             // the result token ending the movetext, or "" if none
  int first_line = 0;             // line of the game's first tag or move
  uint64_t number = 0;            // 1-based position of the game in its file

  // The value of a tag, or "" when absent.
  std::string_view tag(std::string_view name) const;
};

class PgnReader {
 public:
  // Opens a plain, gzip or zstd PGN file ("-" for stdin). Throws legalnet::Error.
  explicit PgnReader(const std::string& path);
  // Reads the next game; false at the end of the file. Syntax it cannot skip (an unclosed
  // comment or tag) throws legalnet::Error naming the file and line.
  bool next(PgnGame& game);
  const std::string& path() const { return input_.path(); }
  // Bytes of the file read so far, compressed as stored (for progress against its size).
  uint64_t compressed_bytes_read() const { return input_.raw_bytes_read(); }

 private:
  bool read_line(std::string& line);
  [[noreturn]] void syntax_error(const std::string& what) const;
  InputFile input_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  int line_number_ = 0;
  uint64_t games_ = 0;
  std::string pending_;  // a line read ahead that starts the next game
  bool has_pending_ = false;
};

// A game's moves checked against the rules, or why they could not be.
struct ReplayedGame {
  chess::Position start;
  chess::Position end;  // after the last legal move
  std::vector<chess::Move> moves;
  std::string error;  // empty when every move was legal: "line 12: move 'Nf9': ..."
};

// Called for each ply with the position before the move, its legal moves and the move.
using PlyVisitor = std::function<void(const chess::Position&, const chess::MoveList&, chess::Move)>;

// Replays a game from its FEN tag or the start position, calling `visit` for every legal
// ply up to the first bad move, if any.
ReplayedGame replay_pgn_game(const PgnGame& game, const PlyVisitor& visit = {});

}  // namespace legalnet
