#include "nn/model_file.h"

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
  try {
    m.net->load(archive);
  } catch (const c10::Error& e) {
    throw Error(path + ": weights do not match the architecture " + m.config.describe());
  }
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
  net.load(model);
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
