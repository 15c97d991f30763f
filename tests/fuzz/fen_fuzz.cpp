// libFuzzer target: any byte string given to the FEN parser either parses into a position that
// round-trips and generates moves, or throws legalnet::Error; never a crash or a sanitizer report.
#include <string>

#include "chess/movegen.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace legalnet;
  try {
    chess::Position pos(std::string_view(reinterpret_cast<const char*>(data), size));
    const std::string fen = pos.fen();
    if (chess::Position(fen).fen() != fen) __builtin_trap();
    for (chess::Move m : chess::MoveList(pos)) {
      pos.do_move(m);
      pos.undo_move(m);
    }
  } catch (const Error&) {
  }
  return 0;
}
