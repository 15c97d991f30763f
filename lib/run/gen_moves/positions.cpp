#include "run/gen_moves/positions.h"

#include <fmt/core.h>

#include <unordered_set>
#include <vector>

#include "chess/movegen.h"
#include "chess/perft.h"
#include "games/material_class.h"
#include "games/placement.h"
#include "games/position_list.h"
#include "util/error.h"
#include "util/files.h"

namespace legalnet::run {
namespace {

constexpr uint64_t MAX_OUTPUT_POSITIONS = 10'000'000;

// The starts, as canonical FENs.
std::vector<std::string> starts(const GenPositionsOptions& o) {
  std::vector<std::string> fens;
  if (o.start == "placement") {
    for (uint64_t i = 0; i < o.count; ++i) {
      GameRng rng(o.seed, i);
      fens.push_back(random_placement(rng).fen());
    }
  } else if (o.start == "perft") {
    for (const auto& c : chess::PERFT_SUITE) fens.push_back(chess::Position(c.fen).fen());
  } else if (o.start == "startpos") {
    fens.push_back(chess::Position().fen());
  } else if (o.start == "exhaustive") {
    const std::vector<MaterialClass> classes = material_classes(o.material);
    if (o.count > 0) {
      for (uint64_t i = 0; i < o.count; ++i)
        fens.push_back(sample_position(classes[i % classes.size()], o.seed, i).fen());
    } else {
      for (const MaterialClass& m : classes) {
        const uint64_t visited = for_each_position(m, [&](const chess::Position& pos) {
          if (fens.size() >= MAX_OUTPUT_POSITIONS)
            throw Error(fmt::format("more than {} positions in --material '{}'", MAX_OUTPUT_POSITIONS, o.material));
          fens.push_back(pos.fen());
        });
        if (visited == 0) throw Error(fmt::format("--material: {} has no legal position", m.name));
      }
    }
  } else {
    fens = read_position_list(o.start);
  }
  return fens;
}

struct Tree {
  std::unordered_set<std::string> seen;
  std::string text;
  uint64_t written = 0;

  void add(const chess::Position& pos) {
    std::string fen = pos.fen();
    if (!seen.insert(fen).second) return;
    if (++written > MAX_OUTPUT_POSITIONS)
      throw Error(fmt::format("more than {} positions: lower --depth or --count", MAX_OUTPUT_POSITIONS));
    text += fen + "\n";
  }
  void walk(chess::Position& pos, int depth) {
    add(pos);
    if (depth == 0) return;
    for (chess::Move m : chess::MoveList(pos)) {
      pos.do_move(m);
      walk(pos, depth - 1);
      pos.undo_move(m);
    }
  }
};

}  // namespace

uint64_t run_gen_positions(const GenPositionsOptions& o) {
  check_gen_positions_options(o);
  check_output_writable({"--out", o.out});
  const bool list = o.start != "placement" && o.start != "perft" && o.start != "startpos" && o.start != "exhaustive";
  check_outputs_are_not_inputs({{"--out", o.out}},
                               list ? std::vector<NamedPath>{{"--start", o.start}} : std::vector<NamedPath>{});
  Tree tree;
  for (const std::string& fen : starts(o)) {
    chess::Position pos(fen);
    tree.walk(pos, o.depth);
  }
  OutputFile out(o.out);
  out.write(tree.text);
  out.finish();
  out.commit();
  return tree.written;
}

}  // namespace legalnet::run
