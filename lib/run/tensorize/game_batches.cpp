#include "run/tensorize/game_batches.h"

#include "chess/game_end.h"

namespace legalnet::run {
namespace {

constexpr size_t GAMES_PER_BATCH = 32;
// A batch also ends at this many plies, so that the batches in flight hold a bounded number of
// encoded rows (about 520 bytes each) however long the games are: 32 games of 80 plies, or
// one game of up to MAX_GAME_PLIES.
constexpr size_t PLIES_PER_BATCH = 16384;

int8_t result_code(std::string_view result) {
  if (result == "1-0") return 1;
  if (result == "0-1") return -1;
  if (result == "1/2-1/2") return 0;
  return -2;
}

// Replays one game onto `rows`; a bad game leaves none of its rows there.
EncodedGame encode_game(const PendingGame& pending, const std::string& source_path, bool include_final,
                        data::EncodedRows& rows) {
  const PgnGame& pgn = pending.pgn;
  EncodedGame g;
  g.first_row = uint32_t(rows.size());
  g.number = pgn.number;
  g.first_line = pgn.first_line;
  g.source_path = source_path;
  int ply = 0;
  const ReplayedGame replayed = replay_pgn_game(pgn, [&](const chess::Position& pos, const chess::MoveList& legal,
                                                         chess::Move played) { rows.add(pos, legal, played, ply++); });
  g.note = replayed.note;
  if (!replayed.error.empty()) {
    g.error = replayed.error;
    g.skip_reason = replayed.skip_reason;
    rows.truncate(g.first_row);
  } else {
    const chess::MoveList final_moves(replayed.end);
    if (include_final) rows.add(replayed.end, final_moves, chess::Move::none(), ply);
    g.info.plies = int32_t(replayed.moves.size());
    g.info.source = pending.source;
    g.info.source_game = int64_t(pgn.number);
    g.info.source_line = pgn.first_line;
    g.info.result = result_code(pgn.result.empty() ? pgn.tag("Result") : std::string_view(pgn.result));
    g.info.termination = int8_t(chess::termination(replayed.end, final_moves.size()));
  }
  g.last_row = uint32_t(rows.size());
  return g;
}

}  // namespace

std::vector<PendingGame> read_batch(PgnReader& reader, int32_t source) {
  std::vector<PendingGame> batch;
  PgnGame game;
  size_t plies = 0;
  while (batch.size() < GAMES_PER_BATCH && plies < PLIES_PER_BATCH && reader.next(game)) {
    plies += game.sans.size();
    batch.push_back({std::move(game), source});
  }
  return batch;
}

EncodedBatch encode_batch(const std::vector<PendingGame>& batch, const std::vector<std::string>& sources,
                          bool include_final) {
  EncodedBatch out;
  for (const PendingGame& pending : batch)
    out.games.push_back(encode_game(pending, sources[size_t(pending.source)], include_final, out.rows));
  return out;
}

}  // namespace legalnet::run
