// tensorize's replay stage: games read from PGN in batches (this thread), each batch replayed
// and encoded into dataset rows by a worker. Bad games keep their place in the batch, with
// their error, so that they are reported in input order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/encoded_rows.h"
#include "pgn/pgn_reader.h"

namespace legalnet::run {

struct PendingGame {
  PgnGame pgn;
  int32_t source = 0;  // index of its file in --in
};

// One game of an EncodedBatch: its rows [first_row, last_row) or, for a bad game, its error.
struct EncodedGame {
  data::GameInfo info;
  uint32_t first_row = 0, last_row = 0;
  std::string error;  // non-empty: the game is skipped
  std::string skip_reason;
  std::string note;
  uint64_t number = 0;  // in its file
  int first_line = 0;
  std::string source_path;
};

struct EncodedBatch {
  data::EncodedRows rows;
  std::vector<EncodedGame> games;
};

// Reads the next batch of `reader`'s games (32 games, fewer when they are long); empty at the
// end of the file.
std::vector<PendingGame> read_batch(PgnReader& reader, int32_t source);

// Replays and encodes a batch; `sources` are the --in files, `include_final` adds each game's
// final position (played_move -1).
EncodedBatch encode_batch(const std::vector<PendingGame>& batch, const std::vector<std::string>& sources,
                          bool include_final);

}  // namespace legalnet::run
