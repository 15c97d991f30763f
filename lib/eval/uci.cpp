#include "eval/uci.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <istream>
#include <optional>
#include <ostream>
#include <vector>

#include "chess/notation.h"
#include "encode/encode.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/text.h"

namespace legalnet::eval {
namespace {

using Tokens = std::vector<std::string_view>;

enum class Read { LINE, LONG_LINE, END };

// The next line of `in` into `line`, without its "\n" or "\r\n". A line longer than `max` bytes
// keeps its first `max` and the rest is read and dropped, so that memory stays bounded whatever
// arrives. END only when nothing is left; a last line without "\n" is a LINE.
Read read_line(std::streambuf& in, std::string& line, size_t max) {
  line.clear();
  bool long_line = false;
  for (;;) {
    const int c = in.sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (line.empty() && !long_line) return Read::END;
      break;
    }
    if (c == '\n') break;
    if (line.size() < max)
      line += char(c);
    else
      long_line = true;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return long_line ? Read::LONG_LINE : Read::LINE;
}

// UCI's tokens are separated by any amount of white space.
Tokens split(std::string_view line) {
  Tokens tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

std::string join(Tokens::const_iterator begin, Tokens::const_iterator end) {
  std::string out;
  for (auto it = begin; it != end; ++it) out += fmt::format("{}{}", out.empty() ? "" : " ", *it);
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Client text quoted in an info string: escaped and cut, so that it can neither break the line
// nor flood the client.
std::string quote(std::string_view text) { return "'" + printable(text, UCI_QUOTE_BYTES) + "'"; }

constexpr std::string_view COMMANDS[] = {"uci",      "debug", "isready", "setoption", "register", "ucinewgame",
                                         "position", "go",    "stop",    "ponderhit", "quit"};

bool is_command(std::string_view token) {
  return std::find(std::begin(COMMANDS), std::end(COMMANDS), token) != std::end(COMMANDS);
}

constexpr std::string_view POLICY_NAMES[] = {"legal", "raw", "sample"};

// The UCI text of a move index the net picked: the legal move it stands for, or for an illegal
// one its squares, with the queen's letter when the mover's pawn would reach the last rank
// (the from-to head has no piece; a queen is what the index stands for).
std::string index_move(const chess::Position& pos, const chess::MoveList& legal, int index) {
  if (const chess::Move m = legal_move_for(legal, index); !m.is_none()) return chess::to_uci(m);
  const chess::Color us = pos.side_to_move();
  const bool promotes = pos.piece_on(encode::index_from(index)) == chess::make_piece(us, chess::PAWN) &&
                        chess::relative_rank(us, chess::rank_of(encode::index_to(index))) == 7;
  return encode::index_name(index) + (promotes ? "q" : "");
}

class Session {
 public:
  Session(std::ostream& out, const UciEngine& engine)
      : out_(out), engine_(engine), seed_(engine.seed), rng_(engine.seed, 0) {}

  // Carries out one line; false after `quit`.
  bool execute(std::string_view line) {
    const Tokens all = split(line);
    // UCI: an unknown token before a command is skipped and the rest of the line parsed.
    const auto first = std::find_if(all.begin(), all.end(), is_command);
    if (first != all.begin())
      info((first == all.end() ? "unknown command " : "ignored before '" + std::string(*first) + "': ") +
           quote(join(all.begin(), first)));
    if (first == all.end()) return true;
    const Tokens t(first, all.end());
    const std::string_view command = t[0];
    if (command == "quit") {
      release();  // a held move is still answered, as Stockfish does when it quits mid-search
      return false;
    }
    if (command == "uci")
      uci();
    else if (command == "isready")
      send("readyok");
    else if (command == "setoption")
      setoption(t);
    else if (command == "ucinewgame") {
      pos_ = chess::Position();
      rng_ = GameRng(seed_, 0);
    } else if (command == "position")
      position(t);
    else if (command == "go")
      go(t);
    else if (command == "stop" || command == "ponderhit")
      release();
    // debug and register ask for nothing this engine has.
    return true;
  }

  void info(const std::string& text) { send("info string " + text); }

  // The end of the input: as `quit`.
  void end() { release(); }

 private:
  void send(const std::string& line) { out_ << line << '\n' << std::flush; }

  void uci() {
    send("id name " + engine_.name);
    send("id author the legalnet developers");
    send("option name Policy type combo default legal var legal var raw var sample");
    send(fmt::format("option name Seed type spin default {} min 0 max {}", engine_.seed, UCI_MAX_SEED));
    send(fmt::format("option name Threads type spin default {} min 1 max {}", engine_.threads, UCI_MAX_THREADS));
    info(engine_.model +
         "; no search: the net's output is the move; a promotion is always to a queen "
         "(the from-to head names no piece)");
    send("uciok");
  }

  // setoption name NAME [value VALUE]; names are case-insensitive, as UCI's GUIs treat them.
  void setoption(const Tokens& t) {
    const auto value_at = std::find(t.begin(), t.end(), "value");
    if (t.size() < 3 || t[1] != "name" || value_at == t.begin() + 2) {
      info("malformed setoption " + quote(join(t.begin() + 1, t.end())) + " ignored (setoption name NAME value VALUE)");
      return;
    }
    const std::string name = lower(join(t.begin() + 2, value_at));
    const std::string value = value_at == t.end() ? "" : join(value_at + 1, t.end());
    if (name == "policy") {
      const auto it = std::find(std::begin(POLICY_NAMES), std::end(POLICY_NAMES), lower(value));
      if (it == std::end(POLICY_NAMES))
        return info("Policy " + quote(value) + " is not legal, raw or sample; kept " + policy_name());
      policy_ = UciPolicy(it - std::begin(POLICY_NAMES));
    } else if (name == "seed") {
      uint64_t seed = 0;
      if (!parse_number(value, UCI_MAX_SEED, seed))
        return info(fmt::format("Seed {} is not a number 0..{}; kept {}", quote(value), UCI_MAX_SEED, seed_));
      seed_ = seed;
      rng_ = GameRng(seed_, 0);
    } else if (name == "threads") {
      uint64_t threads = 0;
      if (!parse_number(value, UCI_MAX_THREADS, threads) || threads == 0)
        return info(fmt::format("Threads {} is not a number 1..{}; unchanged", quote(value), UCI_MAX_THREADS));
      if (engine_.set_threads) engine_.set_threads(int(threads));
    } else {
      info("unknown option " + quote(join(t.begin() + 2, value_at)) + " ignored (options: Policy, Seed, Threads)");
    }
  }

  static bool parse_number(std::string_view text, uint64_t max, uint64_t& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out <= max;
  }

  std::string policy_name() const { return std::string(POLICY_NAMES[size_t(policy_)]); }

  // position startpos | fen FEN [moves M1 M2 ...]: all or nothing; a refused position leaves the
  // previous one in place and says why.
  void position(const Tokens& t) {
    const auto moves_at = std::find(t.begin(), t.end(), "moves");
    std::string fen;
    if (t.size() >= 2 && t[1] == "startpos" && moves_at <= t.begin() + 2) {
      fen = chess::START_FEN;
    } else if (t.size() >= 2 && t[1] == "fen") {
      fen = join(t.begin() + 2, moves_at);
    } else {
      return refuse("it needs 'startpos' or 'fen FEN', then 'moves' and the moves: " +
                    quote(join(t.begin() + 1, t.end())));
    }
    const ptrdiff_t moves = moves_at == t.end() ? 0 : t.end() - moves_at - 1;
    if (moves > UCI_MAX_MOVES) return refuse(fmt::format("{} moves, more than {}", moves, UCI_MAX_MOVES));
    std::string dropped;
    std::optional<chess::Position> next;
    try {
      next.emplace(fen, &dropped);
    } catch (const Error& e) {
      return refuse("FEN " + quote(fen) + ": " + printable(e.what()));
    }
    for (ptrdiff_t i = 0; i < moves; ++i) {
      try {
        next->do_move(chess::parse_uci(*next, moves_at[i + 1]));
      } catch (const Error& e) {
        return refuse(fmt::format("move {} of {}: {}", i + 1, moves, printable(e.what())));
      }
    }
    if (!dropped.empty()) info(chess::castling_dropped_note(dropped));
    pos_ = std::move(*next);
  }

  void refuse(const std::string& why) { info("position refused, the previous one kept: " + why); }

  // go [any limits]: the net's move at once. `go infinite` and `go ponder` hold it until `stop`
  // or `ponderhit`, as UCI asks; a `go` while one is held answers the held one first.
  void go(const Tokens& t) {
    release();
    const bool hold =
        std::find(t.begin(), t.end(), "infinite") != t.end() || std::find(t.begin(), t.end(), "ponder") != t.end();
    const std::string best = "bestmove " + choose();
    if (hold)
      held_ = best;
    else
      send(best);
  }

  void release() {
    if (held_.empty()) return;
    send(held_);
    held_.clear();
  }

  // The move the policy picks, with an info string on the net's view; "0000" without a legal move.
  std::string choose() {
    const chess::MoveList legal(pos_);
    if (legal.empty()) {
      info(pos_.in_check() ? "no legal move: checkmate" : "no legal move: stalemate");
      return "0000";
    }
    probs_.assign(encode::MOVE_INDICES, 0.0f);
    engine_.predict({&pos_}, probs_);
    const float* p = probs_.data();
    const encode::LegalMask mask(legal);
    std::string view = fmt::format("legal share {:.2f}% of the net's mass; top", 100 * encode::legal_share(p, mask));
    for (const int index : encode::top_indices(p, UCI_TOP_MOVES))
      view += fmt::format(" {} {:.3f}{}", encode::index_name(index), p[index], mask[index] ? "" : " (illegal)");
    std::string move;
    switch (policy_) {
      case UciPolicy::LEGAL: move = chess::to_uci(pick_legal_move(legal, p, /*greedy=*/true, 0.0)); break;
      case UciPolicy::RAW: {
        const int index = pick_index(p, /*greedy=*/true, 0.0);
        move = index_move(pos_, legal, index);
        if (!mask[index]) view += "; Policy raw plays the illegal " + move;
        break;
      }
      case UciPolicy::SAMPLE: {
        const int index = pick_index(p, /*greedy=*/false, rng_.uniform());
        chess::Move m = legal_move_for(legal, index);
        if (m.is_none()) {
          view += "; drew the illegal " + index_move(pos_, legal, index) + ", drawn again among the legal moves";
          m = pick_legal_move(legal, p, /*greedy=*/false, rng_.uniform());
        }
        move = chess::to_uci(m);
        break;
      }
    }
    info(view);
    // What a GUI shows of a search (depth, score, principal variation): one ply, the net's move,
    // no evaluation (a legality model scores no position: cp 0).
    send("info depth 1 seldepth 1 multipv 1 score cp 0 nodes 1 time 0 pv " + move);
    return move;
  }

  std::ostream& out_;
  const UciEngine& engine_;
  chess::Position pos_;  // `go` before any `position` plays from the start
  UciPolicy policy_ = UciPolicy::LEGAL;
  uint64_t seed_;
  GameRng rng_;  // Policy sample's draws: restarted by ucinewgame and by a new Seed
  std::string held_;
  std::vector<float> probs_;
};

}  // namespace

void run_uci(std::istream& in, std::ostream& out, const UciEngine& engine) {
  Session session(out, engine);
  std::string line;
  for (;;) {
    const Read read = read_line(*in.rdbuf(), line, UCI_MAX_LINE);
    if (read == Read::END) return session.end();
    if (read == Read::LONG_LINE) {
      session.info(fmt::format("ignored a line longer than {} bytes: {}", UCI_MAX_LINE, quote(line)));
      continue;
    }
    if (!session.execute(line)) return;
  }
}

}  // namespace legalnet::eval
