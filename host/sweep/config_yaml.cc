#include "host/sweep/config_yaml.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

namespace s2r {

std::string ConfigDir(const std::string& file) {
  const size_t slash = file.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

std::string ResolveConfigPath(const std::string& base_dir, const std::string& path) {
  if (path.rfind("builtin:", 0) == 0 || path.empty() || path[0] == '/') return path;
  return base_dir + "/" + path;
}
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string Join(std::initializer_list<const char*> words) {
  std::string out;
  for (const char* w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

std::string Describe(const YAML::Node& n) {
  if (n.IsScalar()) return Quote(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace

ConfigNode ConfigNode::Parse(const std::string& text, const std::string& file) {
  auto name = std::make_shared<const std::string>(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": malformed YAML: " + e.msg);
  }
  YAML::Mark start;
  start.line = 0;
  start.column = 0;
  return ConfigNode(root, "", root.IsDefined() ? root.Mark() : start, name);
}

ConfigNode ConfigNode::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": read error");
  return Parse(text.str(), path);
}

void ConfigNode::Fail(const std::string& what) const {
  int line = mark_.line >= 0 ? mark_.line + 1 : 1, column = mark_.column >= 0 ? mark_.column + 1 : 1;
  throw ConfigError(*file_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                    (path_.empty() ? std::string("(document)") : path_) + ": " + what);
}

ConfigNode ConfigNode::operator[](const std::string& key) const {
  if (!node_.IsMap()) Fail("must be a mapping (key: value), got " + Describe(node_));
  std::string child_path = path_.empty() ? key : path_ + "." + key;
  YAML::Node child = node_[key];
  YAML::Mark mark = child.IsDefined() && child.Mark().line >= 0 ? child.Mark() : mark_;
  return ConfigNode(child, child_path, mark, file_);
}

ConfigNode ConfigNode::Required(const std::string& key) const {
  ConfigNode child = (*this)[key];
  if (!child.defined()) Fail("missing required key " + Quote(key));
  return child;
}

std::vector<ConfigNode> ConfigNode::Items() const {
  if (!node_.IsSequence()) Fail("must be a list, got " + Describe(node_));
  std::vector<ConfigNode> out;
  for (size_t i = 0; i < node_.size(); ++i) {
    YAML::Node item = node_[i];
    YAML::Mark mark = item.Mark().line >= 0 ? item.Mark() : mark_;
    out.push_back(ConfigNode(item, path_ + "[" + std::to_string(i) + "]", mark, file_));
  }
  return out;
}

void ConfigNode::CheckKeys(std::initializer_list<const char*> allowed) const {
  if (!node_.IsMap()) Fail("must be a mapping (key: value), got " + Describe(node_));
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string key = it->first.Scalar();
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) {
      ConfigNode at(it->first, path_.empty() ? key : path_ + "." + key, it->first.Mark(), file_);
      at.Fail("unknown key " + Quote(key) + " (allowed here: " + Join(allowed) + ")");
    }
  }
}

double ConfigNode::Number() const {
  if (!node_.IsScalar()) Fail("must be a number, got " + Describe(node_));
  double v = 0;
  try {
    v = node_.as<double>();
  } catch (const YAML::Exception&) {
    Fail("must be a number, got " + Describe(node_));
  }
  if (!std::isfinite(v)) Fail("must be a finite number, got " + Describe(node_));
  return v;
}

double ConfigNode::Number(double lo, double hi) const {
  double v = Number();
  if (!(v >= lo && v <= hi)) {
    std::ostringstream s;
    s << "must be in [" << lo << ", " << hi << "], got " << v;
    Fail(s.str());
  }
  return v;
}

int64_t ConfigNode::Integer(int64_t lo, int64_t hi) const {
  double v = Number();
  if (v != std::floor(v)) Fail("must be an integer, got " + Describe(node_));
  if (!(v >= double(lo) && v <= double(hi))) {
    Fail("must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + Describe(node_));
  }
  return static_cast<int64_t>(v);
}

bool ConfigNode::Bool() const {
  if (!node_.IsScalar()) Fail("must be true or false, got " + Describe(node_));
  const std::string& s = node_.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  Fail("must be true or false, got " + Describe(node_));
}

std::string ConfigNode::String() const {
  if (!node_.IsScalar()) Fail("must be a string, got " + Describe(node_));
  return node_.Scalar();
}

std::string ConfigNode::Keyword(std::initializer_list<const char*> choices) const {
  std::string s = String();
  for (const char* c : choices) {
    if (s == c) return s;
  }
  Fail("must be one of " + Join(choices) + ", got " + Quote(s));
}

std::vector<std::string> ConfigNode::Strings() const {
  if (node_.IsScalar()) return {node_.Scalar()};
  std::vector<std::string> out;
  for (const ConfigNode& item : Items()) out.push_back(item.String());
  return out;
}

std::vector<double> ConfigNode::Numbers() const {
  if (node_.IsScalar()) return {Number()};
  std::vector<double> out;
  for (const ConfigNode& item : Items()) out.push_back(item.Number());
  return out;
}

}  // namespace s2r
