// TensorBoard event files, written without TensorFlow or protobuf: the few bytes of the format
// a scalar curve needs, encoded by hand. No torch here.
//
// An event file is a sequence of TFRecords, each
//   uint64 length | uint32 masked CRC-32C of the length | data | uint32 masked CRC-32C of the data
// (little-endian), whose data is a protobuf `Event` (tensorflow/core/util/event.proto):
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
// The first record holds file_version "brain.Event:2"; each later one, one step's values: scalars
// (simple_value), text (the text plugin: a string tensor) or the HParams plugin's summaries (its
// protobufs, tensorboard/plugins/hparams/{api,plugin_data}.proto, in metadata.plugin_data.content,
// as torch.utils.tensorboard's hparams() writes them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace legalnet::train::tensorboard {

// CRC-32C (Castagnoli, the reflected polynomial 0x82F63B78) of `data`.
uint32_t crc32c(std::string_view data);
// The CRC TFRecords store: rotated right by 15 bits plus a constant, so that a CRC of data
// holding CRCs does not degenerate.
uint32_t masked_crc32c(std::string_view data);

// `data` framed as one TFRecord.
std::string record(std::string_view data);

struct Scalar {
  std::string tag;
  float value;
};

// The Event messages (unframed): the file's first, and one step's scalars.
std::string file_version_event(double wall_time);
std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars);

// Summary.Value messages (unframed), gathered into one Event by summary_event.
std::string scalar_value(const Scalar& scalar);
// The text plugin's: `markdown` (UTF-8) as a string tensor of one element.
std::string text_value(std::string_view tag, std::string_view markdown);

// An HParams plugin hyperparameter: a number, a string or a bool (its DataType follows).
struct HParam {
  std::string name;
  std::variant<double, std::string, bool> value;
};
// The HParams plugin's summaries (tags "_hparams_/experiment", "_hparams_/session_start_info"):
// the experiment (each hyperparameter's name and type, and the scalar tags its table shows as
// metrics) and one session's values (a run's: TensorBoard's run is the events files' folder).
// TensorBoard takes the experiment of one run for all the runs it shows: every run writes the
// same names. No session_end_info: the table shows a run's status as unknown.
std::string hparams_experiment_value(const std::vector<HParam>& hparams, const std::vector<std::string>& metric_tags);
std::string hparams_session_start_value(const std::vector<HParam>& hparams, double start_time);

// An Event at `step` holding `values` (Summary.Value messages, as above).
std::string summary_event(double wall_time, int64_t step, const std::vector<std::string>& values);

// The step of an Event message (0 when it has none, protobuf's default); nullopt when the
// bytes are not a well-formed message.
std::optional<int64_t> event_step(std::string_view event);

// How many leading bytes of `file` are whole records with intact CRCs whose events' steps
// are at most `last_step` (the file_version record has none and is kept). A record torn by a
// crash while it was written ends the prefix.
size_t records_through_step(std::string_view file, int64_t last_step);

}  // namespace legalnet::train::tensorboard
