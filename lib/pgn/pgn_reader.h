// A streaming PGN reader for generated and real-world games (Lichess, chess.com and GUI
// exports): tag pairs, movetext with comments, NAGs, variations, move numbers, % escape lines,
// LF, CRLF or CR line endings and byte-order marks. Tokens follow the PGN grammar, not lines:
// tags and movetext may share a line. A game it cannot read is returned with `error` set and
// reading goes on with the next game; only a file that is not PGN at all throws.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
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
  std::vector<int> tag_lines;     // the line of each tag
  std::vector<std::string> sans;  // main-line moves, as written
  std::vector<int> san_lines;     // the line of each move in the file
  std::string result;             // the result token ending the movetext ("1/2" read as "1/2-1/2"), or ""
  int first_line = 0;             // line of the game's first tag or move
  uint64_t number = 0;            // 1-based position of the game in its file
  std::string error;              // PGN syntax the reader could not read: the game is to be skipped
  int error_line = 0;

  // The value of a tag, or "" when absent; the line of a tag, or 0.
  std::string_view tag(std::string_view name) const;
  int tag_line(std::string_view name) const;
};

// Bounds that keep a reader's memory small whatever a file holds. A longer line is skipped
// with the game it is in, as a bad game (the standard asks for lines of at most 255
// characters; one-line games of real exports take a few KB; a comment of megabytes costs its
// game, never the file's other games). A longer movetext is not a game of chess: the 75-move rule ends any game within
// 8,848.5 moves.
inline constexpr size_t MAX_PGN_LINE_BYTES = size_t(16) << 20;
inline constexpr size_t MAX_GAME_PLIES = 17697;
inline constexpr size_t MAX_GAME_TAGS = 1000;
// How far the reader looks ahead for the end of a comment or variation that a line like a tag
// pair appears in (below): further than this, it was never closed.
inline constexpr size_t MAX_LOOKAHEAD_BYTES = size_t(1) << 20;

class PgnReader {
 public:
  // Opens a plain, gzip or zstd PGN file ("-" for stdin). Throws legalnet::Error.
  explicit PgnReader(const std::string& path);
  // Reads the next game; false at the end of the file. Throws legalnet::Error only for a file
  // that cannot be read as PGN at all (I/O, broken compression, binary data, no PGN in it).
  bool next(PgnGame& game);
  const std::string& path() const { return input_.path(); }
  // Bytes of the file read so far, compressed as stored (for progress against its size).
  uint64_t compressed_bytes_read() const { return input_.raw_bytes_read(); }

 private:
  bool read_line();
  bool read_file_line(std::string& out);
  bool closes_later(bool in_comment, int variation_depth);
  void read_tag(PgnGame& game);
  void fail_game(PgnGame& game, int line, const std::string& why) const;
  bool finish(PgnGame& game, bool numbered);
  // What next() carries from line to line of one game.
  struct Scan {
    bool in_movetext = false;  // a movetext token was read: a tag now starts the next game
    bool in_comment = false;   // inside {...} (comments do not nest)
    int variation_depth = 0;   // inside (...)
    int open_line = 0;         // where the outermost open comment or variation began
    bool numbered = false;     // the movetext began with a move number
  };
  // The steps of next(); each true when the game is complete.
  bool begin_line(PgnGame& game, Scan& scan);
  bool read_punctuation(PgnGame& game, Scan& scan, bool& read);
  bool read_token(PgnGame& game, Scan& scan);
  bool end_of_input(PgnGame& game, const Scan& scan);
  InputFile input_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  bool skip_lf_ = false;           // the last line ended with CR: a LF right after it belongs to it
  std::deque<std::string> ahead_;  // lines read by closes_later(), to be read next
  uint64_t bytes_read_ = 0, scanned_ahead_ = 0;
  std::string line_;  // the current line and the reading position in it
  size_t col_ = 0;
  int line_number_ = 0;
  uint64_t games_ = 0;
  uint64_t pgn_like_games_ = 0;  // games with a tag, a result or a leading move number
};

// Why a game was skipped, as the summaries count it.
namespace skip_reason {
inline constexpr const char* SYNTAX = "PGN syntax";
inline constexpr const char* FEN_TAG = "bad FEN tag";
inline constexpr const char* MOVE = "illegal or unreadable move";
}  // namespace skip_reason

// A game's moves checked against the rules, or why they could not be.
struct ReplayedGame {
  chess::Position start;
  chess::Position end;  // after the last legal move
  std::vector<chess::Move> moves;
  std::string error;        // empty when the game was read: "line 12, ply 3: move 'Nf9': ..."
  std::string skip_reason;  // with error: one of skip_reason::*, or "variant <name>"
  std::string note;         // something read leniently, e.g. void castling rights dropped
};

// Called for each ply with the position before the move, its legal moves and the move.
using PlyVisitor = std::function<void(const chess::Position&, const chess::MoveList&, chess::Move)>;

// Replays a game from its FEN tag or the start position, calling `visit` for every legal
// ply up to the first bad move, if any. Games of other variants than standard chess (the
// Variant tag, Chess960 included) are not replayed: their skip_reason names the variant.
ReplayedGame replay_pgn_game(const PgnGame& game, const PlyVisitor& visit = {});

}  // namespace legalnet
