#include "host/sweep/policy_net.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "host/store/sha256.h"
#include "host/sweep/sweep_config.h"

namespace s2r {

namespace {

uint16_t U16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(uint8_t(b[at]) | uint8_t(b[at + 1]) << 8);
}
uint32_t U32(const std::string& b, size_t at) { return uint32_t(U16(b, at)) | uint32_t(U16(b, at + 2)) << 16; }
uint64_t U64(const std::string& b, size_t at) { return uint64_t(U32(b, at)) | uint64_t(U32(b, at + 4)) << 32; }

std::string Shape(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// the value of 'key' in a .npy header's dict literal, as written (a quoted string, True/False, a tuple)
std::string HeaderValue(const std::string& header, const std::string& key, const std::string& where) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw NetError(where + ": the .npy header has no '" + key + "'");
  size_t p = header.find(':', k);
  if (p == std::string::npos) throw NetError(where + ": bad .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) throw NetError(where + ": bad .npy header");
  size_t end;
  if (header[p] == '\'' || header[p] == '"') {
    end = header.find(header[p], p + 1);
    if (end == std::string::npos) throw NetError(where + ": bad .npy header");
    return header.substr(p + 1, end - p - 1);
  }
  if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) throw NetError(where + ": bad .npy header");
    return header.substr(p, end - p + 1);
  }
  end = header.find_first_of(",}", p);
  if (end == std::string::npos) throw NetError(where + ": bad .npy header");
  return header.substr(p, end - p);
}

NpyArray ParseNpy(const std::string& b, const std::string& where) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) throw NetError(where + ": not a .npy array");
  const int major = uint8_t(b[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = U16(b, 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw NetError(where + ": truncated .npy array");
    header_len = U32(b, 8);
    start = 12;
  } else {
    throw NetError(where + ": .npy format version " + std::to_string(major) + " is not supported");
  }
  if (start + header_len > b.size()) throw NetError(where + ": truncated .npy header");
  const std::string header = b.substr(start, header_len);
  const std::string descr = HeaderValue(header, "descr", where);
  const std::string fortran = HeaderValue(header, "fortran_order", where);
  const std::string shape_text = HeaderValue(header, "shape", where);
  NpyArray a;
  {
    std::string inner = shape_text.substr(1, shape_text.size() - 2);
    std::stringstream ss(inner);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t f = item.find_first_not_of(' ');
      if (f == std::string::npos) continue;
      try {
        a.shape.push_back(std::stoll(item.substr(f)));
      } catch (const std::exception&) {
        throw NetError(where + ": bad .npy shape " + shape_text);
      }
      if (a.shape.back() < 0) throw NetError(where + ": bad .npy shape " + shape_text);
    }
  }
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) {
    throw NetError(where + ": dtype '" + descr + "' is not supported (little-endian floats, integers or strings)");
  }
  const char kind = descr[1];
  int width = 0;
  try {
    width = std::stoi(descr.substr(2));
  } catch (const std::exception&) {
    throw NetError(where + ": dtype '" + descr + "' is not supported");
  }
  const int64_t n = a.size();
  const char* data = b.data() + start + header_len;
  const size_t have = b.size() - start - header_len;
  const size_t item = kind == 'U' ? size_t(width) * 4 : size_t(width);
  if (have < size_t(n) * item) {
    throw NetError(where + ": holds " + std::to_string(have) + " bytes of data; shape " + Shape(a.shape) + " of '" +
                   descr + "' needs " + std::to_string(size_t(n) * item));
  }
  // C order index of element i when the file is in Fortran order
  const bool f_order = fortran.find("True") != std::string::npos;
  auto source_index = [&](int64_t i) -> int64_t {
    if (!f_order || a.shape.size() < 2) return i;
    int64_t src = 0, stride = 1;
    std::vector<int64_t> idx(a.shape.size());
    for (size_t d = a.shape.size(); d-- > 0;) {
      idx[d] = i % a.shape[d];
      i /= a.shape[d];
    }
    for (size_t d = 0; d < a.shape.size(); ++d) {
      src += idx[d] * stride;
      stride *= a.shape[d];
    }
    return src;
  };
  if (kind == 'U') {
    a.is_string = true;
    for (int64_t i = 0; i < n; ++i) {
      const char* at = data + source_index(i) * item;
      std::string s;
      for (int c = 0; c < width; ++c) {
        uint32_t cp;
        std::memcpy(&cp, at + 4 * c, 4);
        if (cp == 0) break;
        if (cp > 127) throw NetError(where + ": a string with a character that is not ASCII");
        s.push_back(static_cast<char>(cp));
      }
      a.strings.push_back(s);
    }
    return a;
  }
  a.values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* at = data + source_index(i) * item;
    double v;
    if (kind == 'f' && width == 4) {
      float f;
      std::memcpy(&f, at, 4);
      v = f;
    } else if (kind == 'f' && width == 8) {
      std::memcpy(&v, at, 8);
    } else if ((kind == 'i' || kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8)) {
      uint64_t u = 0;
      std::memcpy(&u, at, size_t(width));
      if (kind == 'i' && width < 8 && (u >> (8 * width - 1)) & 1) u |= ~uint64_t(0) << (8 * width);
      v = kind == 'i' ? double(static_cast<int64_t>(u)) : double(u);
    } else if (kind == 'b' && width == 1) {
      v = at[0] ? 1.0 : 0.0;
    } else {
      throw NetError(where + ": dtype '" + descr + "' is not supported (float32/64, integers, strings)");
    }
    a.values[size_t(i)] = static_cast<float>(v);
  }
  return a;
}

std::string Inflate(const char* data, size_t n, size_t out_size, const std::string& where) {
  std::string out(out_size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw NetError(where + ": zlib failed to start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(n);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out_size);
  const int rc = inflate(&z, Z_FINISH);
  const size_t got = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || got != out_size) throw NetError(where + ": its deflated data is corrupt");
  return out;
}

}  // namespace

std::map<std::string, NpyArray> ReadNpz(const std::string& b, const std::string& source) {
  // the end of central directory record: in the last 22 + 65535 bytes
  if (b.size() < 22) throw NetError(source + ": not an .npz file (too short for a zip archive)");
  size_t eocd = std::string::npos;
  const size_t lowest = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
  for (size_t p = b.size() - 22 + 1; p-- > lowest;) {
    if (U32(b, p) == 0x06054b50u) {
      eocd = p;
      break;
    }
  }
  if (eocd == std::string::npos) throw NetError(source + ": not an .npz file (no zip directory)");
  uint64_t entries = U16(b, eocd + 10), cd_size = U32(b, eocd + 12), cd_offset = U32(b, eocd + 16);
  if (eocd >= 20 && U32(b, eocd - 20) == 0x07064b50u) {  // zip64
    const uint64_t z = U64(b, eocd - 20 + 8);
    if (z + 56 > b.size() || U32(b, z) != 0x06064b50u) throw NetError(source + ": bad zip64 directory");
    entries = U64(b, z + 32);
    cd_size = U64(b, z + 40);
    cd_offset = U64(b, z + 48);
  }
  if (cd_offset + cd_size > b.size()) throw NetError(source + ": truncated zip directory");
  std::map<std::string, NpyArray> out;
  size_t p = cd_offset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (p + 46 > b.size() || U32(b, p) != 0x02014b50u) throw NetError(source + ": bad zip directory entry");
    const int method = U16(b, p + 10);
    const uint32_t crc = U32(b, p + 16);
    uint64_t comp = U32(b, p + 20), size = U32(b, p + 24);
    const size_t name_len = U16(b, p + 28), extra_len = U16(b, p + 30), comment_len = U16(b, p + 32);
    uint64_t local = U32(b, p + 42);
    if (p + 46 + name_len + extra_len > b.size()) throw NetError(source + ": bad zip directory entry");
    std::string name = b.substr(p + 46, name_len);
    // zip64 sizes and offset
    for (size_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
      const int id = U16(b, x), len = U16(b, x + 2);
      if (id == 1) {
        size_t q = x + 4;
        if (size == 0xffffffffu) size = U64(b, q), q += 8;
        if (comp == 0xffffffffu) comp = U64(b, q), q += 8;
        if (local == 0xffffffffu) local = U64(b, q);
      }
      x += 4 + size_t(len);
    }
    p += 46 + name_len + extra_len + comment_len;
    const std::string where = source + ": " + name;
    if (local + 30 > b.size() || U32(b, local) != 0x04034b50u) throw NetError(where + ": bad zip entry");
    const size_t data = local + 30 + U16(b, local + 26) + U16(b, local + 28);
    if (data + comp > b.size()) throw NetError(where + ": truncated");
    std::string bytes;
    if (method == 0) {
      if (comp != size) throw NetError(where + ": bad zip entry sizes");
      bytes = b.substr(data, comp);
    } else if (method == 8) {
      bytes = Inflate(b.data() + data, comp, size, where);
    } else {
      throw NetError(where + ": zip compression method " + std::to_string(method) +
                     " is not supported (np.savez or np.savez_compressed write 0 or 8)");
    }
    if (crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())) != crc) {
      throw NetError(where + ": CRC mismatch (the file is corrupt)");
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out[name] = ParseNpy(bytes, source + ": " + name);
  }
  return out;
}

const char* NetActivationName(int32_t activation) {
  switch (activation) {
    case kNetRelu:
      return "relu";
    case kNetTanh:
      return "tanh";
    case kNetElu:
      return "elu";
    default:
      return "linear";
  }
}

int32_t NetActivationFromName(const std::string& name) {
  for (int32_t k : {kNetLinear, kNetRelu, kNetTanh, kNetElu}) {
    if (name == NetActivationName(k)) return k;
  }
  return -1;
}

nlohmann::json PolicyNetFile::Describe() const {
  std::vector<int> layers(net.width, net.width + net.nlayer + 1);
  return {{"file", source},
          {"sha256", sha256},
          {"layers", layers},
          {"activation", NetActivationName(net.activation)},
          {"output_activation", NetActivationName(net.output_activation)},
          {"inputs", inputs}};
}

PolicyNetFile BuildPolicyNet(const std::map<std::string, NpyArray>& arrays, const std::string& source,
                             const SweepConfig& c) {
  PolicyNetFile f;
  f.source = source;
  PolicyNet& net = f.net;
  std::set<std::string> used;
  auto find = [&](const std::string& key) -> const NpyArray* {
    auto it = arrays.find(key);
    if (it == arrays.end()) return nullptr;
    used.insert(key);
    return &it->second;
  };
  auto numbers = [&](const std::string& key, const NpyArray& a) {
    if (a.is_string) throw NetError(source + ": " + key + ": holds strings, expected numbers");
    for (size_t i = 0; i < a.values.size(); ++i) {
      if (!std::isfinite(a.values[i])) {
        throw NetError(source + ": " + key + ": element " + std::to_string(i) + " is not finite (in float32)");
      }
    }
  };
  auto text = [&](const std::string& key, const NpyArray& a) -> std::vector<std::string> {
    if (!a.is_string) throw NetError(source + ": " + key + ": expected a string array (np.array('tanh'))");
    return a.strings;
  };

  // the input blocks: what the task sends a policy process
  const TaskModel& t = c.task.model;
  const std::map<std::string, std::pair<int32_t, int32_t>> blocks = {
      {"obs", {kNetInputObs, kObsSize}},
      {"task_params", {kNetInputTaskParams, static_cast<int32_t>(c.task.params.size())}},
      {"joints", {kNetInputJoints, t.nactuator}},
      {"target", {kNetInputTarget, t.target_body >= 0 ? 3 : 0}}};
  std::vector<std::string> inputs;
  if (const NpyArray* a = find("inputs")) {
    inputs = text("inputs", *a);
    if (inputs.empty()) throw NetError(source + ": inputs: empty");
  } else {
    inputs = {"obs", "task_params", "joints"};
    if (t.target_body >= 0) inputs.push_back("target");
  }
  int n0 = 0;
  std::string sizes;
  for (const std::string& name : inputs) {
    auto it = blocks.find(name);
    if (it == blocks.end()) {
      throw NetError(source + ": inputs: '" + name + "' is not one of obs, task_params, joints, target");
    }
    if (net.ninput == kNetInputBlocks) throw NetError(source + ": inputs: at most 4 blocks");
    for (int k = 0; k < net.ninput; ++k) {
      if (net.input[k] == it->second.first) throw NetError(source + ": inputs: '" + name + "' twice");
    }
    if (it->second.second == 0) {
      throw NetError(source + ": inputs: task " + c.task.info->name + " has no " + name);
    }
    net.input[net.ninput] = it->second.first;
    net.input_size[net.ninput] = it->second.second;
    ++net.ninput;
    n0 += it->second.second;
    sizes += (sizes.empty() ? "" : " + ") + name + " " + std::to_string(it->second.second);
  }
  f.inputs = inputs;

  // the layers
  int nlayer = 0;
  while (arrays.count("layer" + std::to_string(nlayer) + ".weight")) ++nlayer;
  if (nlayer == 0) throw NetError(source + ": no layer0.weight (the first layer's (out, in) weights)");
  if (nlayer > kNetMaxLayers) {
    throw NetError(source + ": " + std::to_string(nlayer) + " layers; at most " + std::to_string(kNetMaxLayers));
  }
  const int na = c.model.nactuator();
  net.nlayer = nlayer;
  net.width[0] = n0;
  if (n0 > kNetMaxInputs) throw NetError(source + ": " + std::to_string(n0) + " inputs; at most " + std::to_string(kNetMaxInputs));
  std::vector<float>& p = f.params;
  for (int l = 0; l < nlayer; ++l) {
    const std::string wk = "layer" + std::to_string(l) + ".weight", bk = "layer" + std::to_string(l) + ".bias";
    const NpyArray& w = *find(wk);
    numbers(wk, w);
    const int in = net.width[l];
    if (w.shape.size() != 2 || w.shape[1] != in) {
      const std::string why = l == 0 ? "the inputs (" + sizes + ") are " + std::to_string(in)
                                     : "layer" + std::to_string(l - 1) + " has " + std::to_string(in) + " outputs";
      throw NetError(source + ": " + wk + ": shape " + Shape(w.shape) + "; expected (out, " + std::to_string(in) +
                     "): " + why);
    }
    const int64_t out = w.shape[0];
    const bool last = l + 1 == nlayer;
    if (last && out != na) {
      throw NetError(source + ": " + wk + ": " + std::to_string(out) + " outputs; the task's actions are " +
                     std::to_string(na));
    }
    if (out < 1 || out > (last ? kNetMaxOutputs : kNetMaxWidth)) {
      throw NetError(source + ": " + wk + ": " + std::to_string(out) + " outputs; at most " +
                     std::to_string(last ? kNetMaxOutputs : kNetMaxWidth));
    }
    net.width[l + 1] = static_cast<int32_t>(out);
    net.weight[l] = static_cast<int64_t>(p.size());
    for (int j = 0; j < in; ++j) {  // transposed: in x out
      for (int64_t o = 0; o < out; ++o) p.push_back(w.values[size_t(o * in + j)]);
    }
    net.bias[l] = static_cast<int64_t>(p.size());
    if (const NpyArray* bias = find(bk)) {
      numbers(bk, *bias);
      if (bias->shape.size() != 1 || bias->shape[0] != out) {
        throw NetError(source + ": " + bk + ": shape " + Shape(bias->shape) + "; expected (" + std::to_string(out) + ",)");
      }
      p.insert(p.end(), bias->values.begin(), bias->values.end());
    } else {
      p.insert(p.end(), size_t(out), 0.0f);
    }
  }
  auto activation = [&](const std::string& key, int32_t fallback, bool required) {
    const NpyArray* a = find(key);
    if (!a) {
      if (required) {
        throw NetError(source + ": no '" + key + "' (relu, tanh, elu or linear) for its " + std::to_string(nlayer - 1) +
                       " hidden layer(s): np.savez(..., " + key + "=np.array('tanh'))");
      }
      return fallback;
    }
    const std::vector<std::string> s = text(key, *a);
    const int32_t k = s.size() == 1 ? NetActivationFromName(s[0]) : -1;
    if (k < 0) throw NetError(source + ": " + key + ": '" + (s.empty() ? "" : s[0]) + "' is not relu, tanh, elu or linear");
    return k;
  };
  net.activation = activation("activation", kNetLinear, nlayer > 1);
  net.output_activation = activation("output_activation", kNetLinear, false);

  // normalization and scaling
  auto vector = [&](const std::string& key, int64_t n, int64_t* offset) {
    const NpyArray* a = find(key);
    if (!a) return;
    numbers(key, *a);
    if (a->shape.size() != 1 || a->shape[0] != n) {
      throw NetError(source + ": " + key + ": shape " + Shape(a->shape) + "; expected (" + std::to_string(n) + ",)");
    }
    *offset = static_cast<int64_t>(p.size());
    p.insert(p.end(), a->values.begin(), a->values.end());
  };
  vector("input_mean", n0, &net.input_mean);
  vector("input_std", n0, &net.input_std);
  if (net.input_std >= 0) {
    for (int j = 0; j < n0; ++j) {
      if (!(p[size_t(net.input_std + j)] > 0)) {
        throw NetError(source + ": input_std: element " + std::to_string(j) + " is not > 0");
      }
    }
  }
  vector("action_scale", na, &net.action_scale);
  vector("action_bias", na, &net.action_bias);
  if (const NpyArray* a = find("input_clip")) {
    numbers("input_clip", *a);
    if (a->size() != 1 || !(a->values[0] > 0)) throw NetError(source + ": input_clip: expected one number > 0");
    net.input_clip = a->values[0];
  }
  for (const auto& [key, a] : arrays) {
    if (!used.count(key)) {
      if (key.rfind("layer", 0) == 0) {
        throw NetError(source + ": '" + key + "': the layers are layer0 .. layer" + std::to_string(nlayer - 1) +
                       " (numbered from 0 without gaps, each with a .weight)");
      }
      throw NetError(source + ": '" + key +
                     "' is not an array a policy network has (layerN.weight, layerN.bias, activation, "
                     "output_activation, inputs, input_mean, input_std, input_clip, action_scale, action_bias)");
    }
  }
  net.nparams = static_cast<int64_t>(p.size());
  return f;
}

PolicyNetFile LoadPolicyNet(const std::string& path, const SweepConfig& c) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NetError(path + ": cannot open the policy network (" + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw NetError(path + ": cannot read the policy network");
  PolicyNetFile f = BuildPolicyNet(ReadNpz(bytes, path), path, c);
  f.sha256 = Sha256Hex(bytes.data(), bytes.size());
  return f;
}

}  // namespace s2r
