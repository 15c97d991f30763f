// Model files and checkpoints as safetensors: round trips, and files from others refused in one
// line before anything they claim is allocated. (Python's side: tests/python/test_model_files.py;
// C++ <-> Python logits: ModelFile/PythonPackage.* in nn_test.cpp.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "nn/model_file.h"
#include "nn/models.h"
#include "nn/safetensors.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

using nlohmann::ordered_json;

ModelConfig small(const std::string& kind, int hidden, int blocks, int channels) {
  ModelConfig c;
  c.kind = parse_model_kind(kind);
  c.hidden = hidden;
  c.blocks = blocks;
  c.channels = channels;
  return c.resolved();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A safetensors file's header and data, to be changed and written back.
struct Parts {
  ordered_json header;
  std::string data;
  explicit Parts(const std::string& bytes) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(bytes[size_t(i)]);
    header = ordered_json::parse(bytes.substr(8, n));
    data = bytes.substr(8 + n);
  }
  // The data's checksum follows a changed tensor, so that the change reaches the reader's other
  // checks, unless `keep_crc` (a damaged copy).
  std::string bytes(bool keep_crc = false) const {
    ordered_json h = header;
    if (!keep_crc && h.contains("__metadata__") && h["__metadata__"].contains(safetensors::DATA_CRC_KEY)) {
      // The tensors in the order of their names (std::map's), as the writer sums them.
      std::map<std::string, std::pair<uint64_t, uint64_t>> spans;
      for (const auto& [name, entry] : h.items())
        if (name != "__metadata__" && entry.contains("data_offsets") && entry["data_offsets"].size() == 2 &&
            entry["data_offsets"][0].is_number_unsigned() && entry["data_offsets"][1].is_number_unsigned())
          spans[name] = {entry["data_offsets"][0].get<uint64_t>(), entry["data_offsets"][1].get<uint64_t>()};
      uLong sum = crc32(0L, Z_NULL, 0);
      for (const auto& [name, span] : spans)
        if (span.first <= span.second && span.second <= data.size())
          sum = crc32(sum, reinterpret_cast<const Bytef*>(data.data() + span.first), uInt(span.second - span.first));
      char crc[9];
      std::snprintf(crc, sizeof crc, "%08lx", sum & 0xffffffffUL);
      h["__metadata__"][safetensors::DATA_CRC_KEY] = crc;
    }
    const std::string text = h.dump();
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint64_t(text.size()) >> (8 * i) & 0xff);
    return out + text + data;
  }
};

// The configs both readers give one verdict on (Python: tests/python/test_model_files.py,
// SharedConfigRules, which also runs evaluate on each in a model file).
TEST(ModelFile, ConfigRulesGiveTheVerdictsOfTheSharedTable) {
  std::ifstream in(std::string(LEGALNET_TEST_SOURCE_DIR) + "/testdata/model_configs.json");
  const auto table = nlohmann::json::parse(in);
  ASSERT_GE(table["cases"].size(), 20u);
  for (const auto& c : table["cases"]) {
    bool accepted = true;
    std::string why;
    try {
      ModelConfig::from_json(c["config"].dump());
    } catch (const Error& e) {
      accepted = false;
      why = e.what();
    }
    EXPECT_EQ(accepted, c["accepted"].get<bool>()) << c["name"] << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
}

TEST(ModelFile, MinParametersIsALowerBoundOfEveryNetAndTheCapRefusesHugeOnes) {
  ModelConfig se = small("resnet", 0, 2, 8);
  se.squeeze_excitation = true;
  for (const auto& c : {small("mlp", 16, 0, 0), small("conv", 16, 2, 4), small("resnet", 0, 1, 8), se,
                        small("resnet", 0, 6, 32), small("attention", 24, 2, 16), small("attention", 0, 1, 8),
                        small("mlp", 0, 0, 0), small("attention", 0, 6, 64), small("conv", 0, 0, 0)}) {
    int64_t weights = 0;
    for (const auto& p : make_model(c)->parameters()) weights += p.numel();
    EXPECT_LE(c.min_parameters(), weights) << c.describe();
    // Close for a net of some size (in a tiny one, biases and embeddings weigh more).
    if (weights > 100'000) {
      EXPECT_GE(double(c.min_parameters()), 0.8 * double(weights)) << c.describe();
    }
  }
  ModelConfig huge;
  huge.kind = ModelKind::RESNET;
  huge.blocks = 256;
  huge.channels = 4096;
  const std::string error = test::error_of([&] { huge.resolved(); });
  EXPECT_EQ(error.rfind("model too large: resnet 256x4096", 0), 0u) << error;
}

TEST(ModelFile, RoundTripKeepsEveryTensorAndTheTrainingRecord) {
  const std::string dir = test::temp_dir("safetensors");
  const ModelConfig c = small("resnet", 0, 2, 8);
  auto net = make_model(c);
  for (auto& b : net->named_buffers())
    if (b.key().find("running") != std::string::npos) b.value().uniform_(0.5, 1.5);
  save_model(dir + "/m.safetensors", c, *net, R"({"steps":3})");
  const LoadedModel loaded = load_model(dir + "/m.safetensors", torch::kCPU);
  EXPECT_EQ(loaded.training_json, R"({"steps":3})");
  auto a = net->named_buffers(), b = loaded.net->named_buffers();
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), loaded.net->named_parameters()[p.key()])) << p.key();
  for (const auto& p : a) EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << p.key();
  // The header is plain safetensors: the metadata names the format and holds the config.
  const safetensors::Reader file(dir + "/m.safetensors");
  EXPECT_EQ(file.metadata("format"), MODEL_FORMAT);
  EXPECT_EQ(file.metadata("config"), c.to_json());
  EXPECT_EQ(file.find("tower.1.conv2.weight")->shape, (std::vector<int64_t>{8, 8, 3, 3}));
}

// Every case: a file made from a good one, refused by load_model with one line that starts with
// the path and holds `expected`.
TEST(ModelFile, HostileFilesAreRefusedInOneLineBeforeAllocation) {
  const std::string dir = test::temp_dir("hostile-models");
  const ModelConfig c = small("resnet", 0, 1, 8);
  const std::string good_path = dir + "/good.safetensors";
  save_model(good_path, c, *make_model(c), "{}");
  const std::string good = read_bytes(good_path);
  auto changed = [&](const std::function<void(Parts&)>& change) {
    Parts p(good);
    change(p);
    return p.bytes();
  };
  auto with_config = [&](const std::string& config) {
    return changed([&](Parts& p) { p.header["__metadata__"]["config"] = config; });
  };
  const std::string weight = "stem.weight";  // the first tensor in the data
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() / 2), "are not within the file's"},
      {good + "x", "the tensors cover"},
      {good.substr(0, 5), "no header length"},
      {std::string("\xff\xff\xff\xff\xff\xff\x00\x00", 8) + "{}", "runs past the end of the file"},
      {good.substr(0, 8) + "[1,2", "runs past the end of the file"},
      {changed([](Parts& p) { p.header = ordered_json::array(); }), "header is not a JSON object"},
      {std::string("\x02\0\0\0\0\0\0\0[]", 10), "header is not a JSON object"},
      {std::string("\x04\0\0\0\0\0\0\0{\"a\"", 12), "header is not JSON"},
      {changed([&](Parts& p) { p.header[weight]["data_offsets"][0] = 4; }), "tensor 'stem.weight'"},
      {changed([](Parts& p) { p.header["stem_bn.bias"]["data_offsets"] = p.header["stem_bn.weight"]["data_offsets"]; }),
       "inside the tensor before it"},
      {changed([&](Parts& p) {
         p.header[weight]["shape"] = {1u << 20, 1u << 20, 1u << 20};
       }),
       "is larger than the file's"},
      {changed([&](Parts& p) {
         p.header[weight]["shape"] = {-1, 8};
       }),
       "not a non-negative integer"},
      {changed([&](Parts& p) { p.header[weight]["dtype"] = "F16"; }), "is not one legalnet reads"},
      {changed([&](Parts& p) { p.header["head.source"]["dtype"] = "F64"; }), "is not one legalnet reads"},
      {changed([&](Parts& p) {
         p.header[weight]["data_offsets"] = {0, uint64_t(1) << 62};
       }),
       "are not within"},
      {changed([&](Parts& p) { p.header["__metadata__"]["format"] = "legalnet-model 1"; }), "format"},
      {changed([&](Parts& p) { p.header["__metadata__"].erase("config"); }), "no 'config'"},
      {changed([&](Parts& p) { p.header["__metadata__"]["config"] = 7; }), "is not a string"},
      {with_config(R"({"kind":"resnet","hidden":0,"blocks":256,"channels":4096,"heads":0,)"
                   R"("squeeze_excitation":false,"geometric_head":true,"inputs":"state"})"),
       "model too large: resnet 256x4096"},
      {with_config(R"({"kind":"resnet","hidden":0,"blocks":10,"channels":1024,"heads":0,)"
                   R"("squeeze_excitation":false,"geometric_head":true,"inputs":"state"})"),
       "the config asks for a resnet 10x1024 +state (at least "},
      {with_config(R"({"kind":"\u001b]0;title\u0007"})"), "unknown model '\\x1b]0;title\\x07'"},
      {with_config(R"({"kind":"resnet"})"), "bad model description"},
      {with_config("{\"kind\x1b\x07"), "bad model description"},
      {with_config("{\"kind\":\"\\u001b[2Jrm\",\"hidden\":0,\"blocks\":1,\"channels\":8,\"heads\":0,"
                   "\"squeeze_excitation\":false,\"geometric_head\":true}"),
       "unknown model '\\x1b[2Jrm'"},
      {changed([](Parts& p) {
         p.header["tower.0.conv1.weight"]["shape"] = {8, 8, 9};
       }),
       "'tower.0.conv1.weight' is"},
      {changed([](Parts& p) {
         p.header["extra\x1b"] = p.header["stem.weight"];
         p.header.erase("stem.weight");
       }),
       "no tensor 'stem.weight'"},
      {changed([](Parts& p) {
         const uint64_t at = p.header["head.source"]["data_offsets"][0].get<uint64_t>();
         p.data[at] = 5;
       }),
       "'head.source' differs from the one the architecture resnet 1x8 +state makes"},
      {std::string("PK\x03\x04") + good, "a TorchScript archive"},
      {[&] {
         Parts p(good);
         p.data[p.data.size() - 1] ^= 1;
         return p.bytes(true);
       }(),
       "the tensors do not match their checksum (legalnet_data_crc32 "},
  };
  int i = 0;
  for (const auto& [bytes, expected] : cases) {
    const std::string path = dir + "/case-" + std::to_string(i++) + ".safetensors";
    write_bytes(path, bytes);
    const std::string error = test::error_of([&] { load_model(path, torch::kCPU); });
    EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
    EXPECT_NE(error.find(expected), std::string::npos) << "case " << i - 1 << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  }
  // A FIFO is refused at once rather than waited on.
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_EQ(test::error_of([&] { load_model(dir + "/fifo", torch::kCPU); }), dir + "/fifo: not a regular file");
  // The file being refused is left as it was.
  EXPECT_EQ(read_bytes(good_path), good);
}

TEST(ModelFile, CheckpointsRefuseAnotherOptimizerAndForeignTensors) {
  const std::string dir = test::temp_dir("checkpoints");
  const ModelConfig c = small("mlp", 16, 0, 0);
  auto net = make_model(c);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-3));
  net->forward_trained(torch::randn({4, c.input_planes(), 8, 8})).sum().backward();
  adam.step();
  save_checkpoint(dir + "/c.safetensors", c, *net, adam, {1, 4, 0.25});

  auto again = make_model(c);
  torch::optim::Adam adam2(again->parameters(), torch::optim::AdamOptions(1e-3));
  const TrainState s = load_checkpoint(dir + "/c.safetensors", c, *again, adam2, torch::kCPU);
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.samples, 4);
  EXPECT_EQ(s.elapsed_seconds, 0.25);
  auto loaded = again->named_parameters();
  for (const auto& p : net->named_parameters()) {
    using State = torch::optim::AdamParamState;
    const auto& was = static_cast<const State&>(*adam.state().at(p.value().unsafeGetTensorImpl()));
    const auto& now = static_cast<const State&>(*adam2.state().at(loaded[p.key()].unsafeGetTensorImpl()));
    EXPECT_EQ(now.step(), was.step());
    EXPECT_TRUE(torch::equal(now.exp_avg(), was.exp_avg())) << p.key();
    EXPECT_TRUE(torch::equal(now.exp_avg_sq(), was.exp_avg_sq())) << p.key();
  }
  torch::optim::SGD sgd(again->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_NE(test::error_of([&] {
              load_checkpoint(dir + "/c.safetensors", c, *again, sgd, torch::kCPU);
            }).find("checkpoint of a run with --optimizer adam, the options ask for sgd"),
            std::string::npos);
  // A model file is not a checkpoint, nor the other way round.
  save_model(dir + "/m.safetensors", c, *net, "{}");
  EXPECT_NE(test::error_of([&] {
              load_checkpoint(dir + "/m.safetensors", c, *again, adam2, torch::kCPU);
            }).find("format 'legalnet-model 2' is not 'legalnet-checkpoint 2'"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              load_model(dir + "/c.safetensors", torch::kCPU);
            }).find("format 'legalnet-checkpoint 2' is not 'legalnet-model 2'"),
            std::string::npos);
  // A step that is not a number.
  Parts p(read_bytes(dir + "/c.safetensors"));
  p.header["__metadata__"]["step"] = "-3";
  write_bytes(dir + "/bad.safetensors", p.bytes());
  EXPECT_NE(test::error_of([&] {
              load_checkpoint(dir + "/bad.safetensors", c, *again, adam2, torch::kCPU);
            }).find("metadata 'step' is '-3', not a non-negative number"),
            std::string::npos);
}

// python/legalnet/model_file.py's _LIMITS copies nn::MAX_SIZES (the Python loader refuses what
// resolved() refuses): the line is read from the source and compared, so a size changed on one
// side only fails here.
TEST(ModelFile, PythonLimitsAreMaxSizes) {
  const std::string source =
      test::read_file(std::string(LEGALNET_TEST_SOURCE_DIR) + "/../python/legalnet/model_file.py");
  std::smatch line;
  ASSERT_TRUE(std::regex_search(source, line, std::regex(R"(\n_LIMITS = \{([^}]*)\})"))) << "no _LIMITS line";
  std::map<std::string, int> limits;
  const std::string entries = line[1];
  const std::regex entry(R"re("(\w+)": (\d+))re");
  for (auto it = std::sregex_iterator(entries.begin(), entries.end(), entry); it != std::sregex_iterator(); ++it)
    limits[(*it)[1]] = std::stoi((*it)[2]);
  const std::map<std::string, int> expected{{"hidden", MAX_SIZES.hidden},
                                            {"blocks", MAX_SIZES.blocks},
                                            {"channels", MAX_SIZES.channels},
                                            {"heads", MAX_SIZES.heads}};
  EXPECT_EQ(limits, expected) << "_LIMITS: " << entries;
}

}  // namespace
}  // namespace legalnet::nn
