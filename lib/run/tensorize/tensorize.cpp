#include "run/tensorize/tensorize.h"

#include <deque>
#include <filesystem>
#include <future>
#include <memory>

#include "run/report_file.h"
#include "run/tensorize/game_batches.h"
#include "run/tensorize/game_router.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/thread_pool.h"

namespace legalnet::run {
namespace {

// Every output writable, none an input, with all its JSON will hold as text: found now, not
// after the work.
void check_outputs(const TensorizeOptions& o) {
  std::vector<NamedPath> outputs, inputs;
  for (const std::string& path : dataset_paths(o)) outputs.push_back({"--out", path});
  outputs.push_back({"--report", o.report});
  for (const auto& in : o.pgn_files) inputs.push_back({"--in", in});
  check_outputs_are_not_inputs(outputs, inputs);
  for (const auto& out : outputs) check_output_writable(out);
  if (!o.report.empty()) {
    const NamedPath json{"--report", o.report};
    for (const auto& p : inputs) check_json_text(p.option, p.path, json);
    for (const auto& p : outputs) check_json_text(p.option, p.path, json);
    check_json_text("the command line", o.command_line, json);
  }
}

uint64_t input_bytes(const std::vector<std::string>& files) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& in : files)
    if (const auto size = std::filesystem::file_size(in, ec); in != "-" && !ec) total += size;
  return total;
}

// This thread parses PGN and writes; workers replay, encode and compress. Batches are consumed
// in submission order, so the output does not depend on --threads.
void tensorize_games(const TensorizeOptions& o, ThreadPool& pool, DatasetOutputs& outputs, GameRouter& router,
                     Progress& progress, const TensorizeReport& report) {
  std::deque<std::future<EncodedBatch>> in_flight;
  const size_t max_in_flight = size_t(2 * pool.size() + 1);
  auto write_front = [&] {
    const EncodedBatch batch = in_flight.front().get();
    in_flight.pop_front();
    for (const EncodedGame& g : batch.games)
      if (const auto part = router.route(g, batch.rows))
        outputs.part(*part).add_game(g.info, batch.rows, router.selected());
  };
  const uint64_t total_bytes = input_bytes(o.pgn_files);
  uint64_t bytes_done = 0;
  for (size_t source = 0; source < o.pgn_files.size() && !router.stopped(); ++source) {
    PgnReader reader(o.pgn_files[source]);
    while (!router.stopped()) {
      auto batch = std::make_shared<std::vector<PendingGame>>(read_batch(reader, int32_t(source)));
      if (batch->empty()) break;
      in_flight.push_back(pool.submit([batch, &o] { return encode_batch(*batch, o.pgn_files, o.include_final); }));
      while (in_flight.size() > max_in_flight && !router.stopped()) write_front();
      if (total_bytes) progress.set_fraction(double(bytes_done + reader.compressed_bytes_read()) / double(total_bytes));
      progress.update(report.positions);
    }
    bytes_done += reader.compressed_bytes_read();
  }
  // After a --max-positions stop the batches still in flight are waited for, not written.
  while (!in_flight.empty()) {
    if (router.stopped()) {
      in_flight.front().wait();
      in_flight.pop_front();
    } else {
      write_front();
    }
  }
}

}  // namespace

TensorizeReport run_tensorize(const TensorizeOptions& o) {
  check_tensorize_options(o);
  check_outputs(o);
  ThreadPool pool(worker_threads(o.threads));
  DatasetOutputs outputs(o, pool);
  TensorizeReport report;
  report.options = o;
  Progress progress("positions", 0, !o.quiet && stderr_is_terminal());
  GameRouter router(o, report, progress);
  tensorize_games(o, pool, outputs, router, progress, report);
  progress.finish();
  outputs.finish(o, report);
  report.seconds = progress.elapsed_seconds();
  std::unique_ptr<OutputFile> json;
  if (!o.report.empty()) json = finished_report(o.report, report.json());
  // Every output is complete: only now do they take their names, together.
  outputs.commit(json ? json->atomic() : nullptr);
  if (!o.quiet) report.print();
  return report;
}

}  // namespace legalnet::run
