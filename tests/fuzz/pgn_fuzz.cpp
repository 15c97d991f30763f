// libFuzzer target: the PGN reader and replay on arbitrary bytes (plain, or gzip/zstd when the
// bytes start with their magic) must report errors, never crash.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "pgn/pgn_reader.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace legalnet;
  static const std::string path = "/tmp/legalnet-pgn-fuzz-" + std::to_string(getpid()) + ".pgn";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    PgnReader reader(path);
    PgnGame game;
    while (reader.next(game)) replay_pgn_game(game);
  } catch (const Error&) {
  }
  return 0;
}
