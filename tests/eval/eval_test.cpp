#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "chess/legal_edits.h"
#include "chess/notation.h"
#include "encode/encode.h"
#include "eval/anatomy.h"
#include "eval/gallery.h"
#include "eval/games.h"
#include "eval/position_search.h"
#include "support/helpers.h"

namespace legalnet::eval {
namespace {

using chess::Move;
using chess::MoveList;
using chess::Position;

int index_of(const char* uci) {
  const int from = (uci[0] - 'a') + 8 * (uci[1] - '1'), to = (uci[2] - 'a') + 8 * (uci[3] - '1');
  return from * 64 + to;
}

TEST(Anatomy, FalsePositiveReasons) {
  const Position start;
  EXPECT_EQ(reason_illegal(start, index_of("e2e5")), NOT_A_MOVE_OF_THAT_PIECE);  // pawn cannot go 3
  EXPECT_EQ(reason_illegal(start, index_of("e4e5")), NOT_A_MOVE_OF_THAT_PIECE);  // no piece there
  EXPECT_EQ(reason_illegal(start, index_of("e7e5")), NOT_A_MOVE_OF_THAT_PIECE);  // not our piece
  EXPECT_EQ(reason_illegal(start, index_of("a1a3")), BLOCKED);                   // rook through a pawn
  EXPECT_EQ(reason_illegal(start, index_of("e1e2")), BLOCKED);                   // own piece on target
  EXPECT_EQ(reason_illegal(start, index_of("e2d3")), CASTLING_EP_RULES);         // pawn diagonal to empty
  EXPECT_EQ(reason_illegal(start, index_of("e1g1")), CASTLING_EP_RULES);
  // Pinned rook leaving the file, and a king stepping into check.
  const Position pinned("4r2k/8/8/8/8/8/4R3/4K3 w - - 0 1");
  EXPECT_EQ(reason_illegal(pinned, index_of("e2d2")), KING_SAFETY);
  const Position king("7k/8/8/8/8/8/3r4/4K3 w - - 0 1");
  EXPECT_EQ(reason_illegal(king, index_of("e1e2")), KING_SAFETY);
}

TEST(Anatomy, HandComputedCounts) {
  const Position start;
  const chess::MoveList legal(start);
  std::vector<float> probs(encode::MOVE_INDICES, 0.0f);
  // Predict 10 of the 16 pawn moves and one illegal move (a1a3, blocked); knights at 0.4.
  int n = 0;
  for (auto m : legal)
    if (start.moved_piece_type(m) == chess::PAWN && n < 10) probs[size_t(encode::move_index(m))] = 0.9f, ++n;
  for (const char* k : {"b1a3", "b1c3", "g1f3", "g1h3"}) probs[size_t(index_of(k))] = 0.4f;
  probs[size_t(index_of("a1a3"))] = 0.95f;
  Anatomy a;
  a.add(start, legal, probs.data(), 0.5f);
  EXPECT_EQ(a.total.legal(), 20u);
  EXPECT_EQ(a.total.true_positives, 10u);
  EXPECT_EQ(a.total.predicted(), 11u);
  EXPECT_EQ(a.total.false_positives, 1u);
  EXPECT_EQ(a.total.false_negatives, 10u);
  EXPECT_DOUBLE_EQ(a.total.precision(), 10.0 / 11);
  EXPECT_DOUBLE_EQ(a.total.recall(), 10.0 / 20);
  EXPECT_DOUBLE_EQ(a.total.f1(), 2 * (10.0 / 11) * 0.5 / (10.0 / 11 + 0.5));
  EXPECT_EQ(a.by_kind[PAWN_MOVE].legal(), 16u);
  EXPECT_EQ(a.by_kind[PAWN_MOVE].true_positives, 10u);
  EXPECT_EQ(a.by_kind[KNIGHT_MOVE].true_positives, 0u);
  EXPECT_EQ(a.by_kind[ROOK_MOVE].predicted(), 1u);
  EXPECT_EQ(a.by_kind[ROOK_MOVE].true_positives, 0u);
  EXPECT_EQ(a.false_positives[BLOCKED], 1u);
  EXPECT_EQ(a.exact_sets, 0u);
  EXPECT_EQ(a.top1_legal, 0u);  // a1a3 scores highest
  const double legal_mass = 10 * 0.9 + 4 * 0.4, all = legal_mass + 0.95;
  EXPECT_NEAR(a.legal_mass_sum, legal_mass / all, 1e-6);
  EXPECT_EQ(a.kind_positions[NOT_IN_CHECK], 1u);
  EXPECT_EQ(a.kind_positions[OPENING], 1u);
}

TEST(Anatomy, PerfectPredictionIsExact) {
  const Position pos("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2");
  const chess::MoveList legal(pos);
  std::vector<float> probs(encode::MOVE_INDICES, 0.0f);
  for (auto m : legal) probs[size_t(encode::move_index(m))] = 1.0f;
  Anatomy a;
  a.add(pos, legal, probs.data(), 0.5f);
  EXPECT_EQ(a.exact_sets, 1u);
  EXPECT_EQ(a.top1_legal, 1u);
  EXPECT_EQ(a.total.predicted(), a.total.true_positives);
  EXPECT_EQ(a.by_kind[CASTLING].legal(), 2u);
  EXPECT_EQ(a.by_kind[EN_PASSANT].legal(), 1u);
  EXPECT_NEAR(a.legal_mass_sum, 1.0, 1e-9);
}

Predictor uniform_legal() {
  return [](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    for (size_t i = 0; i < positions.size(); ++i)
      for (auto m : chess::MoveList(*positions[i])) probs[i * encode::MOVE_INDICES + size_t(encode::move_index(m))] = 1;
  };
}

TEST(Games, APerfectModelNeverPlaysIllegalMoves) {
  GameOptions o;
  o.games = 20;
  o.seed = 3;
  o.concurrent = 7;
  const GamesSummary s = play_games(uniform_legal(), o);
  EXPECT_EQ(s.illegal_picks().count, 0u);
  EXPECT_EQ(s.clean_games().value(), 1.0);
  EXPECT_EQ(s.wins + s.draws + s.losses, 20);
  for (const auto& g : s.games) {
    EXPECT_EQ(g.plies_before_illegal, g.plies);
    EXPECT_TRUE(g.natural_end);
  }
  const GamesSummary again = play_games(uniform_legal(), o);
  EXPECT_EQ(again.mean_plies_before_illegal(), s.mean_plies_before_illegal());
}

TEST(Games, AModelThatAlwaysErrsStopsAtItsFirstMove) {
  const Predictor wrong = [](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    for (size_t i = 0; i < positions.size(); ++i) probs[i * encode::MOVE_INDICES + 0] = 1;  // a1a1
  };
  GameOptions o;
  o.games = 40;
  o.resample_illegal = false;
  const GamesSummary s = play_games(wrong, o);
  int white = 0;
  for (const auto& g : s.games) {
    EXPECT_TRUE(g.had_illegal);
    EXPECT_EQ(g.model_picks, 1);
    EXPECT_TRUE(g.plies_before_illegal == 0 || g.plies_before_illegal == 1);
    white += g.plies_before_illegal == 0;
  }
  EXPECT_GT(white, 5);  // colours are drawn at random
  EXPECT_LT(white, 35);
  EXPECT_EQ(s.illegal_picks().value(), 1.0);
  EXPECT_EQ(s.clean_games().count, 0u);
}

// A model that errs only when its side is in check, and only in even-numbered games, then with a
// move that ignores the check where there is one: its illegal picks are all in check, and the
// clean games are exactly the odd ones and the even ones in which it never had to answer a check.
// One game at a time, so that the fake model knows which game it is in (a game's first pick is at
// fullmove 1, and no game ends before the model's pick at fullmove 2).
TEST(Games, IllegalPicksInCheckAreCountedApartAndCleanGamesAreThoseWithoutThem) {
  std::vector<bool> erred;  // per game
  uint64_t in_check = 0, illegal_in_check = 0, not_in_check = 0, king_safety = 0;
  std::array<uint64_t, REASON_NB> reasons{};  // of the illegal picks
  const Predictor errs_in_check = [&](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    ASSERT_EQ(positions.size(), 1u);
    const Position& pos = *positions[0];
    if (pos.fullmove_number() == 1) erred.push_back(false);
    const MoveList legal(pos);
    bool is_legal[encode::MOVE_INDICES] = {};
    for (Move m : legal) is_legal[encode::move_index(m)] = true;
    in_check += pos.in_check();
    not_in_check += !pos.in_check();
    if (!pos.in_check() || erred.size() % 2 == 0) {  // the odd games (0-based) play legally
      for (Move m : legal) probs[size_t(encode::move_index(m))] = 1;
      return;
    }
    ++illegal_in_check;
    erred.back() = true;
    int pick = 0;  // a1a1, never a move
    for (int i = 1; i < encode::MOVE_INDICES; ++i)
      if (!is_legal[i] && encode::index_from(i) != encode::index_to(i) && reason_illegal(pos, i) == KING_SAFETY) {
        pick = i;
        ++king_safety;
        break;
      }
    ++reasons[size_t(reason_illegal(pos, pick))];
    probs[size_t(pick)] = 1;
  };
  GameOptions o;
  o.games = 30;
  o.seed = 5;
  o.concurrent = 1;
  const GamesSummary s = play_games(errs_in_check, o);
  ASSERT_EQ(erred.size(), 30u);
  const uint64_t clean = uint64_t(std::count(erred.begin(), erred.end(), false));
  EXPECT_GE(clean, 15u);  // the odd games
  EXPECT_LT(clean, 30u);  // and not every even game went without a check
  EXPECT_EQ(s.clean_games().count, clean);
  EXPECT_EQ(s.clean_games().total, 30u);
  EXPECT_DOUBLE_EQ(s.clean_games().value(), double(clean) / 30);
  EXPECT_EQ(s.clean_games().interval(), wilson_interval(clean, 30));

  EXPECT_GT(illegal_in_check, 0u);
  EXPECT_LT(illegal_in_check, in_check);  // the odd games' checks are answered legally
  EXPECT_EQ(s.illegal_picks_in_check().count, illegal_in_check);
  EXPECT_EQ(s.illegal_picks_in_check().total, in_check);
  EXPECT_DOUBLE_EQ(s.illegal_picks_in_check().value(), double(illegal_in_check) / double(in_check));
  EXPECT_EQ(s.illegal_picks_in_check().interval(), wilson_interval(illegal_in_check, in_check));
  EXPECT_EQ(s.illegal_picks_not_in_check().count, 0u);
  EXPECT_EQ(s.illegal_picks_not_in_check().total, not_in_check);
  EXPECT_EQ(s.illegal_picks_not_in_check().value(), 0.0);
  EXPECT_EQ(s.illegal_picks().count, illegal_in_check);
  EXPECT_EQ(s.illegal_picks().total, in_check + not_in_check);
  EXPECT_GT(king_safety, 0u);
  EXPECT_LE(king_safety, illegal_in_check);
  EXPECT_EQ(s.illegal_by_reason()[KING_SAFETY], king_safety);
  EXPECT_EQ(s.illegal_by_reason(), reasons);
  EXPECT_EQ(std::accumulate(reasons.begin(), reasons.end(), uint64_t{0}), illegal_in_check);
}

// A model that puts mass on a1a1 (never a move) whenever its side is in check, and on every legal
// move: the adversary, which plays the reply after which the model's illegal mass is highest,
// gives check whenever it can, so the model answers far more checks than against a random mover,
// and errs only there.
TEST(Games, TheAdversaryStepsIntoTheModelsWeakSpot) {
  const Predictor errs_in_check = [](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    for (size_t i = 0; i < positions.size(); ++i) {
      for (auto m : chess::MoveList(*positions[i])) probs[i * encode::MOVE_INDICES + size_t(encode::move_index(m))] = 1;
      if (positions[i]->in_check()) probs[i * encode::MOVE_INDICES] = 1;
    }
  };
  GameOptions o;
  o.games = 12;
  o.seed = 4;
  o.max_plies = 120;
  o.concurrent = 5;
  const GamesSummary random = play_games(errs_in_check, o);
  o.opponent = Opponent::ADVERSARY;
  const GamesSummary adversary = play_games(errs_in_check, o);
  const auto share_in_check = [](const GamesSummary& s) {
    return double(s.illegal_picks_in_check().total) / double(s.illegal_picks().total);
  };
  EXPECT_GT(share_in_check(adversary), 3 * share_in_check(random));
  EXPECT_EQ(adversary.illegal_picks_not_in_check().count, 0u);
  EXPECT_GT(adversary.illegal_picks().count, random.illegal_picks().count);
  EXPECT_GT(adversary.mean_adversary_mass(), 0.0);
  EXPECT_EQ(random.mean_adversary_mass(), 0.0);
  const GamesSummary again = play_games(errs_in_check, o);  // the adversary draws nothing
  EXPECT_EQ(again.illegal_picks().count, adversary.illegal_picks().count);
  EXPECT_EQ(again.mean_plies_before_illegal(), adversary.mean_plies_before_illegal());
}

// A model with a little mass on a1a1 (never a move) in every position: after a mate all its mass
// is illegal, but a mated model has no pick to get wrong, so the adversary mates it only when
// every reply would; it steers to the positions with the fewest legal moves instead.
TEST(Games, TheAdversaryDoesNotEndTheGamesItHuntsIn) {
  const Predictor uniform = [](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    for (size_t i = 0; i < positions.size(); ++i) {
      for (auto m : chess::MoveList(*positions[i])) probs[i * encode::MOVE_INDICES + size_t(encode::move_index(m))] = 1;
      probs[i * encode::MOVE_INDICES] = 0.5f;
    }
  };
  GameOptions o;
  o.games = 40;
  o.seed = 6;
  o.opponent = Opponent::ADVERSARY;
  o.concurrent = 8;
  const GamesSummary s = play_games(uniform, o);
  EXPECT_EQ(s.losses, 0);
  EXPECT_GT(s.wins + s.draws, 0);
  EXPECT_GT(s.mean_adversary_mass(), 0.0);
  EXPECT_LE(s.mean_adversary_mass(), 1.0 / 3);  // 0.5 / (legal moves + 0.5) where the game goes on
}

TEST(PositionSearch, EditsAreLegalDeterministicAndVaried) {
  const Position start("r3k2r/ppp2ppp/8/3pP3/8/8/PPP2PPP/R3K2R w KQkq d6 0 1");
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 300; ++i) {
    GameRng a(9, i), b(9, i);
    const auto edited = chess::random_edit(start, a);
    ASSERT_TRUE(edited.has_value());
    EXPECT_EQ(edited->fen(), chess::random_edit(start, b)->fen());
    EXPECT_NE(edited->fen(), start.fen());
    EXPECT_EQ(Position(edited->fen()).fen(), edited->fen());  // a legal position, read back as itself
    seen.insert(edited->fen());
  }
  EXPECT_GT(seen.size(), 100u);
}

TEST(PositionSearch, TheWorstMarginIsTheWorstMoveOfEitherKind) {
  const Position pos;
  std::vector<float> probs(encode::MOVE_INDICES, 0.0f);
  for (auto m : MoveList(pos)) probs[size_t(encode::move_index(m))] = 1;
  EXPECT_EQ(worst_margin(pos, probs.data()), 0.0);
  probs[size_t(encode::move_index(MoveList(pos)[0]))] = 0.25f;
  EXPECT_DOUBLE_EQ(worst_margin(pos, probs.data()), 0.75);
  probs[0] = 0.9f;  // a1a1, never a move
  EXPECT_NEAR(worst_margin(pos, probs.data()), 0.9, 1e-6);
}

// A model right everywhere but where the side to move has a queen and a knight: no start has
// both, the search adds them. A perfect model is never broken.
TEST(PositionSearch, FindsAWeakSpotAPerfectModelHasNone) {
  const Predictor errs = [](const std::vector<const Position*>& positions, std::vector<float>& probs) {
    for (size_t i = 0; i < positions.size(); ++i) {
      const Position& pos = *positions[i];
      for (auto m : MoveList(pos)) probs[i * encode::MOVE_INDICES + size_t(encode::move_index(m))] = 1;
      const chess::Color us = pos.side_to_move();
      // Closer to the weak spot, a higher margin that never breaks: the climb has a slope.
      const bool queen = pos.pieces(us, chess::QUEEN) != 0, knight = pos.pieces(us, chess::KNIGHT) != 0;
      probs[i * encode::MOVE_INDICES] = queen && knight ? 0.9f : queen || knight ? 0.3f : 0.0f;
    }
  };
  const std::vector<std::string> starts = {"4k3/8/8/8/8/8/8/4K3 w - - 0 1", "8/8/3k4/8/8/2K5/8/8 b - - 0 1",
                                           "4k3/pppp4/8/8/8/8/4PPPP/4K3 w - - 0 1"};
  SearchOptions o;
  o.budget = 400;
  o.seed = 2;
  const SearchSummary found = search_positions(errs, starts, o);
  EXPECT_EQ(found.broken().count, 3u);
  for (const auto& s : found.starts) {
    EXPECT_FALSE(s.start_broken);
    EXPECT_LE(s.evaluations, 400);
    const Position worst(s.worst);
    EXPECT_TRUE(worst.pieces(worst.side_to_move(), chess::QUEEN) && worst.pieces(worst.side_to_move(), chess::KNIGHT))
        << s.worst;
  }
  EXPECT_GT(found.median_evaluations_to_break(), 1.0);
  const SearchSummary again = search_positions(errs, starts, o);
  EXPECT_EQ(again.starts[1].worst, found.starts[1].worst);
  const SearchSummary perfect = search_positions(uniform_legal(), starts, o);
  EXPECT_EQ(perfect.broken().count, 0u);
  for (const auto& s : perfect.starts) EXPECT_EQ(s.evaluations, 400);
  o.random_walk = true;
  EXPECT_EQ(search_positions(uniform_legal(), starts, o).broken().count, 0u);
}

// Known values: 1 of 10 gives 1.79%-40.42% (R's prop.test(1, 10, correct = FALSE)); none of n
// and all of n have closed forms, [0, z^2 / (n + z^2)] and [n / (n + z^2), 1]; no trials, no interval.
TEST(Stats, WilsonInterval) {
  const auto [low, high] = wilson_interval(1, 10);
  EXPECT_NEAR(low, 0.0179, 5e-5);
  EXPECT_NEAR(high, 0.4042, 5e-5);
  const double z2 = 1.96 * 1.96;
  EXPECT_EQ(wilson_interval(0, 10).first, 0.0);
  EXPECT_NEAR(wilson_interval(0, 10).second, z2 / (10 + z2), 1e-12);
  EXPECT_NEAR(wilson_interval(10, 10).first, 10 / (10 + z2), 1e-12);
  EXPECT_EQ(wilson_interval(10, 10).second, 1.0);
  EXPECT_EQ(wilson_interval(0, 0), std::make_pair(0.0, 0.0));
  // Every interval holds its proportion exactly (report-html checks it): rounding once put
  // 49 of 49 just above an upper bound of 0.9999999999999999.
  for (uint64_t n = 1; n <= 400; ++n)
    for (uint64_t k : {uint64_t(0), uint64_t(1), n / 2, n - 1, n}) {
      const auto [lo, hi] = wilson_interval(k, n);
      const double p = double(k) / double(n);
      EXPECT_LE(lo, p) << k << " of " << n;
      EXPECT_GE(hi, p) << k << " of " << n;
    }
  const Proportion p{1, 10};
  EXPECT_EQ(p.value(), 0.1);
  EXPECT_EQ(p.interval(), wilson_interval(1, 10));
}

// Picks cluster in games: the interval over games is the ratio's spread over them, never
// narrower than the Wilson interval; the worst game is the first with the most picks.
TEST(Games, TheIntervalOverGamesAndTheWorstGameSeeWherePicksCluster) {
  GamesSummary s;
  for (const int illegal : {0, 10, 0, 2, 10}) {
    GameRecordStats g;
    g.model_picks = 100;
    g.illegal_picks = illegal;
    s.games.push_back(g);
  }
  ASSERT_TRUE(s.worst_game());
  EXPECT_EQ(*s.worst_game(), 1u);
  // 22 of 500: residuals -4.4, 5.6, -4.4, -2.4, 5.6 from 4.4 picks a game.
  const double rate = 22.0 / 500, squares = 2 * 4.4 * 4.4 + 2 * 5.6 * 5.6 + 2.4 * 2.4;
  const auto [low, high] = s.illegal_rate_interval_over_games();
  EXPECT_NEAR(high, rate + 1.96 * std::sqrt(5.0 / 4 * squares) / 500, 1e-12);
  EXPECT_EQ(low, 0.0);  // the normal interval's low end is below 0
  EXPECT_GT(high, s.illegal_picks().interval().second);
  // Picks spread evenly over the games: the games' spread is nil, the Wilson interval stays.
  for (auto& g : s.games) g.illegal_picks = 1;
  EXPECT_EQ(s.illegal_rate_interval_over_games(), s.illegal_picks().interval());
  EXPECT_EQ(*s.worst_game(), 0u);
  for (auto& g : s.games) g.illegal_picks = 0;
  EXPECT_FALSE(s.worst_game());
  EXPECT_EQ(s.illegal_rate_interval_over_games(), wilson_interval(0, 500));
}

TEST(Games, PickIndexSamplesInProportion) {
  std::vector<float> p(encode::MOVE_INDICES, 0.0f);
  p[10] = 1.0f;
  p[20] = 3.0f;
  EXPECT_EQ(pick_index(p.data(), true, 0.0), 20);
  EXPECT_EQ(pick_index(p.data(), false, 0.2), 10);
  EXPECT_EQ(pick_index(p.data(), false, 0.3), 20);
}

// A net whose outputs overflow gives NaN or infinities: no pick may leave the vector or land
// on an index that has no weight (a NaN sum once walked past every index and a null move was
// played from the last one).
TEST(Games, PickIndexIgnoresNaNAndInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> p(encode::MOVE_INDICES, nan);
  p[7] = 0.5f;
  p[4095] = inf;
  p[4000] = -inf;
  for (const double u : {0.0, 0.5, 0.999999})
    for (const bool greedy : {false, true}) EXPECT_EQ(pick_index(p.data(), greedy, u), 7) << u;
  std::fill(p.begin(), p.end(), nan);
  for (const double u : {0.0, 0.5, 0.999999})
    for (const bool greedy : {false, true}) {
      const int i = pick_index(p.data(), greedy, u);
      EXPECT_TRUE(i >= 0 && i < encode::MOVE_INDICES) << i;
    }
  // Rounding that leaves the walk short ends on the last index with weight, not on 4095.
  std::fill(p.begin(), p.end(), 0.0f);
  p[100] = 1e-30f;
  EXPECT_EQ(pick_index(p.data(), false, std::nextafter(1.0, 0.0)), 100);
}

// A model that knows every legal move but also likes a few illegal ones, more in some positions
// than in others: the gallery keeps the positions with the most illegal mass, draws only moves
// that are illegal, with the anatomy's reason, and groups the games' illegal picks by reason.
TEST(Gallery, ShowsOnlyIllegalMovesWithTheAnatomysReason) {
  Gallery gallery(4, 0.5f);
  std::vector<double> masses;
  const auto fens = test::sample_fens(7, 60);
  for (size_t n = 0; n < fens.size(); ++n) {
    const Position pos(fens[n]);
    const MoveList legal(pos);
    std::vector<float> p(encode::MOVE_INDICES, 0.0f);
    bool is_legal[encode::MOVE_INDICES] = {};
    for (Move m : legal) {
      is_legal[encode::move_index(m)] = true;
      p[size_t(encode::move_index(m))] = n % 3 == 0 ? 0.2f : 0.9f;  // some legal moves missed
    }
    int illegal = 0;  // a few illegal indices, with a weight that varies by position
    for (int k = 0; k < encode::MOVE_INDICES && illegal < 3; k += 97)
      if (!is_legal[k] && k / 64 != k % 64) {
        p[size_t(k)] = 0.05f + 0.01f * float(n % 17);
        ++illegal;
      }
    double all = 0, bad = 0;
    for (int k = 0; k < encode::MOVE_INDICES; ++k) (all += p[size_t(k)], bad += is_legal[k] ? 0 : p[size_t(k)]);
    masses.push_back(bad / all);
    gallery.add_position(pos, legal, p.data(), "row " + std::to_string(n));
    for (int k = 0; k < encode::MOVE_INDICES; k += 97)
      if (!is_legal[k] && p[size_t(k)] > 0) gallery.add_illegal_pick(pos, k, p.data(), "game " + std::to_string(n));
  }
  std::sort(masses.rbegin(), masses.rend());
  const auto groups = gallery.groups();
  ASSERT_GE(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "most-illegal-mass");
  ASSERT_EQ(groups[0].mistakes.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(groups[0].mistakes[i].illegal_mass, masses[i], 1e-6);
  for (const auto& group : groups) {
    EXPECT_LE(group.mistakes.size(), 4u);
    for (const Mistake& m : group.mistakes) {
      const Position pos(m.fen);
      for (Move legal : MoveList(pos)) EXPECT_NE(encode::move_index(legal), m.move) << m.fen;
      EXPECT_EQ(m.reason, reason_illegal(pos, m.move)) << m.fen;
      if (group.name != "most-illegal-mass") {
        const char* stem = m.reason == KING_SAFETY         ? "leaves-or-puts-own-king-in-check"
                           : m.reason == BLOCKED           ? "blocked"
                           : m.reason == CASTLING_EP_RULES ? "castling-en-passant-rules"
                                                           : "not-a-move-of-that-piece";
        EXPECT_EQ(group.name, std::string("illegal-picks-") + stem);
      }
      for (int missed : m.missed) {
        bool found = false;
        for (Move legal : MoveList(pos)) found |= encode::move_index(legal) == missed;
        EXPECT_TRUE(found) << "a missed move must be legal";
      }
    }
    // One board a mistake, each with its red arrow.
    const std::string svg = gallery_svg(group);
    size_t arrows = 0;
    for (size_t at = svg.find("url(#r)"); at != std::string::npos; at = svg.find("url(#r)", at + 1)) ++arrows;
    EXPECT_EQ(arrows, group.mistakes.size());
  }
}

}  // namespace
}  // namespace legalnet::eval
