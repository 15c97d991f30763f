// gen_moves perft: the legal move tree's leaf counts below each move of a position, printed in
// Stockfish's 'go perft' format so that the two compare line by line.
#pragma once

#include "run/gen_moves/options.h"

namespace legalnet::run {

// Prints the counts on stdout and returns the total; throws legalnet::Error on a bad FEN.
uint64_t run_perft(const PerftOptions& options);

}  // namespace legalnet::run
