#include "nn/model_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "nn/safetensors.h"
#include "util/error.h"
#include "util/json.h"

namespace legalnet::nn {
namespace {

using safetensors::Dtype;

// A model's training record is train's options.json and four figures: kilobytes (a list of
// thousands of shards under --data stays under a megabyte).
constexpr JsonLimits TRAINING_LIMITS{.max_bytes = size_t(4) << 20};

Dtype dtype_of(const torch::Tensor& t, const std::string& name) {
  switch (t.scalar_type()) {
    case torch::kFloat: return Dtype::F32;
    case torch::kLong: return Dtype::I64;
    case torch::kBool: return Dtype::BOOL;
    default:
      throw Error("cannot save '" + name + "': its dtype " + std::string(c10::toString(t.scalar_type())) +
                  " is not F32, I64 or BOOL");
  }
}

torch::ScalarType scalar_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return torch::kFloat;
    case Dtype::I64: return torch::kLong;
    case Dtype::BOOL: return torch::kBool;
  }
  return torch::kFloat;
}

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

// The net's parameters and buffers under torch's names ("tower.0.conv1.weight").
std::vector<std::pair<std::string, torch::Tensor>> state_of(PolicyNet& net) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (const auto& p : net.named_parameters()) state.emplace_back(p.key(), p.value());
  for (const auto& b : net.named_buffers()) state.emplace_back(b.key(), b.value());
  return state;
}

// The buffers a net builds from its config (the index heads' move maps): a file holds them so
// that Python's load_state_dict finds every name, but they are compared, never loaded.
bool is_derived_buffer(const std::string& name) {
  const std::string last = name.substr(name.rfind('.') + 1);
  return last == "source" || last == "fixed_off" || last == "impossible";
}

// Collects CPU copies of tensors (kept alive until written) for one safetensors file.
class TensorFile {
 public:
  void add(const std::string& name, const torch::Tensor& t) {
    kept_.push_back(t.detach().to(torch::kCPU).contiguous());
    writer_.add(name, dtype_of(kept_.back(), name), kept_.back().sizes().vec(), kept_.back().data_ptr());
  }
  void set_metadata(const std::string& key, std::string value) { writer_.set_metadata(key, std::move(value)); }
  void write(const std::string& path) { writer_.write(path); }

 private:
  safetensors::Writer writer_;
  std::vector<torch::Tensor> kept_;
};

// The tensors of one file, read on demand, with the names used so far (a file may hold no other).
class TensorSource {
 public:
  explicit TensorSource(const std::string& path, const safetensors::Limits& limits = {}) : file_(path, limits) {}
  const safetensors::Reader& file() const { return file_; }
  const std::string& path() const { return file_.path(); }

  bool has(const std::string& name) const { return file_.find(name) != nullptr; }
  // The tensor `name`, which must exist with the dtype and shape given.
  torch::Tensor read(const std::string& name, torch::ScalarType dtype, const std::vector<int64_t>& shape) {
    const safetensors::TensorInfo* info = file_.find(name);
    if (!info) throw Error(path() + ": no tensor '" + name + "', which the " + what_ + " needs");
    if (scalar_type(info->dtype) != dtype || info->shape != shape)
      throw Error(path() + ": '" + name + "' is " + safetensors::dtype_name(info->dtype) + shape_text(info->shape) +
                  ", the " + what_ + " makes " + safetensors::dtype_name(dtype_of(torch::empty({0}, dtype), name)) +
                  shape_text(shape));
    used_.insert(name);
    auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
    file_.read(*info, t.data_ptr());
    // A weight of NaN or infinity loads and runs, and makes every output NaN (evaluate's games
    // once played a null move from one): refused here, as Python's load_model refuses it.
    if (dtype == torch::kFloat && !torch::isfinite(t).all().item<bool>())
      throw Error(path() + ": tensor '" + safetensors::printable(name) + "' holds a NaN or infinite value");
    return t;
  }
  void describe_as(std::string what) { what_ = std::move(what); }
  // Refuses a tensor no part of the net or optimizer asked for.
  void check_all_used() const {
    for (const auto& t : file_.tensors())
      if (!used_.count(t.name))
        throw Error(path() + ": tensor '" + safetensors::printable(t.name) + "' is not part of the " + what_);
  }

 private:
  safetensors::Reader file_;
  std::set<std::string> used_;
  std::string what_ = "model";
};

// The config of a file's metadata, its sizes checked against the caps and the file's size
// before any net is built: a 1 KB file cannot ask for a net of 300 GB.
ModelConfig config_of(const TensorSource& source) {
  const std::string& text = source.file().metadata("config");
  ModelConfig config;
  try {
    config = ModelConfig::from_json(text);
  } catch (const Error& e) {
    // from_json escapes the file's text in its messages already; escaping again would show
    // a backslash as \x5c.
    throw Error(source.path() + ": " + e.what());
  }
  const int64_t floats = int64_t(source.file().data_bytes() / 4);
  if (config.min_parameters() > floats)
    throw Error(fmt::format("{}: the config asks for a {} (at least {} weights), the file holds {} bytes of tensors",
                            source.path(), config.describe(), config.min_parameters(), source.file().data_bytes()));
  return config;
}

void check_format(const safetensors::Reader& file, const char* expected) {
  const std::string& format = file.metadata("format");
  if (format != expected)
    throw Error(file.path() + ": format '" + safetensors::printable(format) + "' is not '" + expected + "'");
}

// Copies every tensor of the net from the file (names prefixed by `prefix`) into the net, on
// whatever device and memory format the net's tensors have.
void load_state(PolicyNet& net, TensorSource& source, const std::string& prefix, const ModelConfig& config) {
  source.describe_as("architecture " + config.describe());
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : state_of(net)) {
    const torch::Tensor stored = source.read(prefix + name, tensor.scalar_type(), tensor.sizes().vec());
    if (!is_derived_buffer(name)) {
      tensor.copy_(stored);
    } else if (!torch::equal(stored, tensor.to(torch::kCPU))) {
      throw Error(source.path() + ": '" + prefix + name + "' differs from the one the architecture " +
                  config.describe() + " makes");
    }
  }
}

// Adam and AdamW keep the same state per parameter under different types.
template <typename State>
void save_adam_state(TensorFile& out, const std::string& prefix, const State& s) {
  out.add(prefix + "step", torch::tensor(s.step(), torch::kLong));
  out.add(prefix + "exp_avg", s.exp_avg());
  out.add(prefix + "exp_avg_sq", s.exp_avg_sq());
  if (s.max_exp_avg_sq().defined()) out.add(prefix + "max_exp_avg_sq", s.max_exp_avg_sq());
}

template <typename State>
std::unique_ptr<State> load_adam_state(TensorSource& in, const std::string& prefix, const torch::Tensor& p) {
  auto s = std::make_unique<State>();
  const int64_t step = in.read(prefix + "step", torch::kLong, {}).item<int64_t>();
  if (step < 0) throw Error(in.path() + ": '" + prefix + "step' is negative");
  s->step(step);
  auto like = [&](const char* field) {
    auto t = torch::empty_like(p);
    t.copy_(in.read(prefix + field, torch::kFloat, p.sizes().vec()));
    return t;
  };
  s->exp_avg(like("exp_avg"));
  s->exp_avg_sq(like("exp_avg_sq"));
  if (in.has(prefix + "max_exp_avg_sq")) s->max_exp_avg_sq(like("max_exp_avg_sq"));
  return s;
}

const char* optimizer_kind(torch::optim::Optimizer& optimizer) {
  if (dynamic_cast<torch::optim::AdamW*>(&optimizer)) return "adamw";
  if (dynamic_cast<torch::optim::Adam*>(&optimizer)) return "adam";
  if (dynamic_cast<torch::optim::SGD*>(&optimizer)) return "sgd";
  throw Error("checkpoints hold the state of Adam, AdamW and SGD only");
}

template <typename T>
T number_of(const safetensors::Reader& file, const std::string& key) {
  const std::string& text = file.metadata(key);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0) || !std::isfinite(double(value)))
    throw Error(file.path() + ": metadata '" + key + "' is '" + safetensors::printable(text) +
                "', not a non-negative number");
  return value;
}

}  // namespace

void save_model(const std::string& path, const ModelConfig& config, PolicyNet& net, const std::string& training_json) {
  TensorFile out;
  for (const auto& [name, tensor] : state_of(net)) out.add(name, tensor);
  out.set_metadata("format", MODEL_FORMAT);
  out.set_metadata("config", config.to_json());
  out.set_metadata("training", training_json);
  out.write(path);
}

LoadedModel load_model(const std::string& path, const torch::Device& device) {
  TensorSource source(path);
  check_format(source.file(), MODEL_FORMAT);
  LoadedModel m;
  m.config = config_of(source);
  const auto& metadata = source.file().metadata();
  m.training_json = metadata.count("training") ? metadata.at("training") : "{}";
  // Copied into evaluate's report as JSON: checked here, where the file can be named, and
  // bounded (a record nested thousands deep once overflowed the stack when the report was written).
  try {
    check_json_bounds(m.training_json, TRAINING_LIMITS);
  } catch (const JsonError& e) {
    throw Error(path + ": metadata 'training' is " + e.what());
  }
  if (!nlohmann::json::accept(m.training_json))
    throw Error(path + ": metadata 'training' is not JSON ('" + safetensors::printable(m.training_json.substr(0, 60)) +
                "')");
  m.net = make_model(m.config);
  load_state(*m.net, source, "", m.config);
  source.check_all_used();
  m.net->to(device);
  return m;
}

void save_checkpoint(const std::string& path, const ModelConfig& config, PolicyNet& net,
                     torch::optim::Optimizer& optimizer, const TrainState& state, PolicyNet* average) {
  TensorFile out;
  for (const auto& [name, tensor] : state_of(net)) out.add("model." + name, tensor);
  if (average)
    for (const auto& [name, tensor] : state_of(*average)) out.add("average." + name, tensor);
  for (const auto& p : net.named_parameters()) {
    const auto it = optimizer.state().find(p.value().unsafeGetTensorImpl());
    if (it == optimizer.state().end()) continue;  // no step has touched it yet
    const std::string prefix = "optimizer." + p.key() + ".";
    if (const auto* s = dynamic_cast<const torch::optim::AdamWParamState*>(it->second.get())) {
      save_adam_state(out, prefix, *s);
    } else if (const auto* a = dynamic_cast<const torch::optim::AdamParamState*>(it->second.get())) {
      save_adam_state(out, prefix, *a);
    } else if (const auto* m = dynamic_cast<const torch::optim::SGDParamState*>(it->second.get())) {
      if (m->momentum_buffer().defined()) out.add(prefix + "momentum_buffer", m->momentum_buffer());
    }
  }
  out.set_metadata("format", CHECKPOINT_FORMAT);
  out.set_metadata("config", config.to_json());
  out.set_metadata("optimizer", optimizer_kind(optimizer));
  out.set_metadata("step", std::to_string(state.step));
  out.set_metadata("samples", std::to_string(state.samples));
  out.set_metadata("elapsed_seconds", fmt::format("{}", state.elapsed_seconds));  // shortest exact text
  if (!state.mined_positions.empty()) out.set_metadata("mined_positions", state.mined_positions);
  out.write(path);
}

TrainState load_checkpoint(const std::string& path, const ModelConfig& expected, PolicyNet& net,
                           torch::optim::Optimizer& optimizer, const torch::Device& device, PolicyNet* average) {
  (void)device;                  // the net and optimizer are already there: tensors are copied onto theirs
  safetensors::Limits run_file;  // a run folder's own file: never read through a link
  run_file.follow_links = false;
  TensorSource source(path, run_file);
  check_format(source.file(), CHECKPOINT_FORMAT);
  const ModelConfig config = config_of(source);
  if (config.to_json() != expected.resolved().to_json())
    throw Error(path + ": checkpoint is a " + config.describe() + ", the options ask for " +
                expected.resolved().describe());
  const std::string kind = optimizer_kind(optimizer);
  if (source.file().metadata("optimizer") != kind)
    throw Error(path + ": checkpoint of a run with --optimizer " +
                safetensors::printable(source.file().metadata("optimizer")) + ", the options ask for " + kind);
  TrainState s;
  s.step = number_of<int64_t>(source.file(), "step");
  s.samples = number_of<int64_t>(source.file(), "samples");
  s.elapsed_seconds = number_of<double>(source.file(), "elapsed_seconds");
  if (const auto it = source.file().metadata().find("mined_positions"); it != source.file().metadata().end())
    s.mined_positions = it->second;
  // Bounds no run reaches (a trillion steps, a year of years), so that the data order's row
  // arithmetic (step x batch) cannot overflow; train then holds the step to the run's length.
  if (s.step > MAX_CHECKPOINT_STEP)
    throw Error(fmt::format("{}: metadata 'step' is {}, more than any run takes (at most {})", path, s.step,
                            MAX_CHECKPOINT_STEP));
  if (s.samples > (int64_t(1) << 62) || s.elapsed_seconds > 1e15)
    throw Error(path + ": metadata 'samples' or 'elapsed_seconds' is beyond what a run reaches");

  load_state(net, source, "model.", config);
  // The first of the net's tensors tells whether the run kept an average (train --ema).
  if (source.has("average." + state_of(net).front().first) != (average != nullptr))
    throw Error(path + (average ? ": checkpoint of a run without --ema, the options ask for it"
                                : ": checkpoint of a run with --ema, the options ask for none"));
  if (average) {
    source.describe_as("average of " + config.describe());
    load_state(*average, source, "average.", config);
  }
  source.describe_as(kind + " optimizer of " + config.describe());
  torch::NoGradGuard no_grad;
  for (const auto& p : net.named_parameters()) {
    const std::string prefix = "optimizer." + p.key() + ".";
    void* key = p.value().unsafeGetTensorImpl();
    if (kind == "sgd") {
      if (!source.has(prefix + "momentum_buffer")) continue;
      auto state = std::make_unique<torch::optim::SGDParamState>();
      auto buffer = torch::empty_like(p.value());
      buffer.copy_(source.read(prefix + "momentum_buffer", torch::kFloat, p.value().sizes().vec()));
      state->momentum_buffer(buffer);
      optimizer.state()[key] = std::move(state);
    } else if (source.has(prefix + "step")) {
      if (kind == "adamw")
        optimizer.state()[key] = load_adam_state<torch::optim::AdamWParamState>(source, prefix, p.value());
      else
        optimizer.state()[key] = load_adam_state<torch::optim::AdamParamState>(source, prefix, p.value());
    }
  }
  source.check_all_used();
  return s;
}

}  // namespace legalnet::nn
