// libFuzzer target: the PGN reader and replay on arbitrary bytes (plain, or gzip/zstd when the
// bytes start with their magic) must report errors, never crash.
#include <string>

#include "fuzz_input.h"
#include "pgn/pgn_reader.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace legalnet;
  static const std::string path = fuzz_input_path("pgn", ".pgn");
  if (!write_fuzz_input(path, data, size)) return 0;
  try {
    PgnReader reader(path);
    PgnGame game;
    while (reader.next(game)) replay_pgn_game(game);
  } catch (const Error&) {
  }
  return 0;
}
