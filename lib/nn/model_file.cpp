#include "nn/model_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "util/error.h"
#include "util/files.h"

namespace legalnet::nn {
namespace {

std::string read_string(torch::serialize::InputArchive& archive, const char* key, const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isString())
    throw Error(path + ": not a legalnet model (no '" + std::string(key) + "')");
  return value.toStringRef();
}

torch::serialize::InputArchive open_archive(const std::string& path, const torch::Device& device) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw Error(path + ": cannot read as a torch archive (" + what.substr(0, what.find('\n')) + ")");
  }
  return archive;
}

// Saves under a temporary name and renames, so a crash never leaves a half-written file.
void write_archive(torch::serialize::OutputArchive& archive, const std::string& path, const char* what) {
  AtomicPath atomic(path);
  try {
    archive.save_to(atomic.temp());
  } catch (const c10::Error& e) {
    throw Error(std::string("cannot write ") + what + " '" + path + "'");
  }
  atomic.commit();
}

// torch's Module::load replaces each tensor with the stored one, shape included: a file whose
// config disagrees with its weights would load "successfully" into a net of another shape.
// Loads, then compares every parameter and buffer with the shapes the config makes.
void load_checked(PolicyNet& net, torch::serialize::InputArchive& archive, const std::string& path,
                  const ModelConfig& config) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& p : net.named_parameters()) expected.emplace_back(p.key(), p.value().sizes().vec());
  for (const auto& b : net.named_buffers()) expected.emplace_back(b.key(), b.value().sizes().vec());
  try {
    net.load(archive);
  } catch (const c10::Error& e) {
    throw Error(path + ": weights do not match the architecture " + config.describe());
  }
  std::map<std::string, std::vector<int64_t>> loaded;
  for (const auto& p : net.named_parameters()) loaded[p.key()] = p.value().sizes().vec();
  for (const auto& b : net.named_buffers()) loaded[b.key()] = b.value().sizes().vec();
  for (const auto& [name, shape] : expected)
    if (loaded[name] != shape)
      throw Error(path + ": weights do not match the architecture " + config.describe() + ": '" + name + "' is " +
                  fmt::format("[{}]", fmt::join(loaded[name], ",")) + ", the config makes " +
                  fmt::format("[{}]", fmt::join(shape, ",")));
}

}  // namespace

void save_model(const std::string& path, const ModelConfig& config, PolicyNet& net, const std::string& training_json) {
  torch::serialize::OutputArchive archive;
  net.save(archive);
  archive.write("legalnet_format", c10::IValue(std::string(MODEL_FORMAT)));
  archive.write("legalnet_config", c10::IValue(config.to_json()));
  archive.write("legalnet_training", c10::IValue(training_json));
  write_archive(archive, path, "model");
}

LoadedModel load_model(const std::string& path, const torch::Device& device) {
  auto archive = open_archive(path, device);
  const std::string format = read_string(archive, "legalnet_format", path);
  if (format != MODEL_FORMAT) throw Error(path + ": model format '" + format + "' is not '" + MODEL_FORMAT + "'");
  LoadedModel m;
  m.config = ModelConfig::from_json(read_string(archive, "legalnet_config", path));
  c10::IValue training;
  m.training_json =
      archive.try_read("legalnet_training", training) && training.isString() ? training.toStringRef() : "{}";
  m.net = make_model(m.config);
  load_checked(*m.net, archive, path, m.config);
  m.net->to(device);
  return m;
}

void save_checkpoint(const std::string& path, const ModelConfig& config, PolicyNet& net,
                     torch::optim::Optimizer& optimizer, const TrainState& state) {
  torch::serialize::OutputArchive archive, model, optim;
  net.save(model);
  optimizer.save(optim);
  archive.write("model", model);
  archive.write("optimizer", optim);
  archive.write("legalnet_config", c10::IValue(config.to_json()));
  archive.write("step", c10::IValue(state.step));
  archive.write("samples", c10::IValue(state.samples));
  archive.write("elapsed_seconds", c10::IValue(state.elapsed_seconds));
  write_archive(archive, path, "checkpoint");
}

TrainState load_checkpoint(const std::string& path, const ModelConfig& expected, PolicyNet& net,
                           torch::optim::Optimizer& optimizer, const torch::Device& device) {
  auto archive = open_archive(path, device);
  const ModelConfig config = ModelConfig::from_json(read_string(archive, "legalnet_config", path));
  if (config.to_json() != expected.resolved().to_json())
    throw Error(path + ": checkpoint is a " + config.describe() + ", the options ask for " +
                expected.resolved().describe());
  torch::serialize::InputArchive model, optim;
  archive.read("model", model);
  archive.read("optimizer", optim);
  load_checked(net, model, path, config);
  optimizer.load(optim);
  auto get = [&](const char* key) {
    c10::IValue v;
    if (!archive.try_read(key, v)) throw Error(path + ": checkpoint has no '" + std::string(key) + "'");
    return v;
  };
  TrainState s;
  s.step = get("step").toInt();
  s.samples = get("samples").toInt();
  s.elapsed_seconds = get("elapsed_seconds").toDouble();
  return s;
}

}  // namespace legalnet::nn
