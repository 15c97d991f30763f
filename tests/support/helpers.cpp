#include "support/helpers.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "chess/movegen.h"
#include "encode/attack_planes.h"
#include "games/random_game.h"

namespace legalnet::test {

std::string run_command(const std::string& command, const std::string& input) {
  const std::string in_path = temp_dir("cmd") + "/stdin";
  std::ofstream(in_path) << input;
  std::FILE* pipe = popen((command + " < '" + in_path + "'").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0) throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command);
  return out;
}

std::vector<StockfishPerft> stockfish_perft(const std::vector<std::string>& fens, int depth) {
  std::string script;
  for (const auto& fen : fens) script += "position fen " + fen + "\ngo perft " + std::to_string(depth) + "\n";
  script += "quit\n";
  const std::string out = run_command(stockfish_path(), script);
  std::vector<StockfishPerft> results(1);
  std::istringstream lines(out);
  const std::regex move_line("^[a-h][1-8][a-h][1-8][qrbn]?: [0-9]+$");
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, move_line)) {
      results.back().moves.push_back(line);
    } else if (line.rfind("Nodes searched: ", 0) == 0) {
      results.back().nodes = std::stoull(line.substr(16));
      std::sort(results.back().moves.begin(), results.back().moves.end());
      results.emplace_back();
    }
  }
  results.pop_back();
  return results;
}

std::string stockfish_path() { return LEGALNET_STOCKFISH; }
std::string pgn_extract_path() { return LEGALNET_PGN_EXTRACT; }
std::string python_path() { return LEGALNET_PYTHON; }
std::string bin_dir() { return LEGALNET_BIN_DIR; }

bool has_pinned_piece(const chess::Position& pos) {
  using namespace chess;
  const Color us = pos.side_to_move();
  const Square k = pos.king_square(us);
  for (Bitboard b = pos.pieces(us) & ~pos.pieces(KING); b;) {
    const Bitboard occupied = pos.pieces() ^ square_bb(pop_lsb(b));
    if ((rook_attacks(k, occupied) & pos.pieces(~us, ROOK, QUEEN)) ||
        (bishop_attacks(k, occupied) & pos.pieces(~us, BISHOP, QUEEN)))
      return !pos.in_check();
  }
  return false;
}

bool side_to_move_in_check(const int8_t* squares, int side) {
  int8_t planes[encode::ATTACK_PLANES * 64];
  encode::encode_attack_planes(squares, side, planes);
  for (int s = 0; s < 64; ++s)
    if (planes[2 * 64 + s]) return true;
  return false;
}

std::vector<std::string> sample_fens(uint64_t seed, size_t count) {
  std::vector<std::string> fens;
  for (uint64_t game = 0; fens.size() < count; ++game) {
    GameRng rng(seed, game);
    const GameRecord record = play_random_game(chess::Position(), rng, 0);
    chess::Position pos;
    for (size_t ply = 0; ply <= record.moves.size() && fens.size() < count; ++ply) {
      const chess::MoveList legal(pos);
      bool special = pos.in_check() || pos.ep_square() != chess::SQ_NONE || has_pinned_piece(pos);
      for (chess::Move m : legal) special |= m.kind() != chess::MoveKind::NORMAL;
      if (special || ply % 25 == 0) fens.push_back(pos.fen());
      if (ply < record.moves.size()) pos.do_move(record.moves[ply]);
    }
  }
  return fens;
}

namespace {

// The folders temp_dir made in this process, removed when it exits: a suite run leaves nothing
// in /tmp (earlier runs left ~1 GB a day on a developer's machine). LEGALNET_KEEP_TEST_FILES=1
// keeps them, to look at a failure's files.
struct TempDirs {
  std::vector<std::filesystem::path> dirs;
  ~TempDirs() {
    const char* keep = std::getenv("LEGALNET_KEEP_TEST_FILES");
    if (keep && *keep && std::string(keep) != "0") return;
    for (const auto& dir : dirs) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

}  // namespace

std::string temp_dir(const std::string& name) {
  static TempDirs made;
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("legalnet-test-" + std::to_string(getpid()) + "-" + name + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace legalnet::test
