// Reading YAML configs (sweep, sysid) with errors that name the file, line, column and key path.
//
// Every value is read through a ConfigNode, which knows its key path from the document root
// (`randomization[2].low`) and the nearest position yaml-cpp recorded for it, so a wrong type, an
// out-of-range value, a missing or an unknown key reads
//   configs/sweeps/push.yaml:14:5: randomization[2].low: must be a number, got 'abc'
// Numbers must be finite; YAML's .nan and .inf are rejected like any other non-number.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace s2r {

// The folder of a config file ("." for a bare name): relative paths in it resolve against it.
std::string ConfigDir(const std::string& file);
// `path` as written in a config in `base_dir`: builtin:<name> and absolute paths as they are,
// relative ones joined to base_dir.
std::string ResolveConfigPath(const std::string& base_dir, const std::string& path);

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& what) : std::runtime_error(what) {}
};

class ConfigNode {
 public:
  // The document in `text`; `file` names it in errors (and is the base for relative paths).
  static ConfigNode Parse(const std::string& text, const std::string& file);
  static ConfigNode LoadFile(const std::string& path);

  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }
  bool defined() const { return node_.IsDefined() && !node_.IsNull(); }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }
  bool IsScalar() const { return node_.IsScalar(); }
  const YAML::Node& yaml() const { return node_; }

  // "<file>:<line>:<column>: <path>: <what>" (line and column 1-based)
  [[noreturn]] void Fail(const std::string& what) const;

  // A map's child; undefined (not an error) when the key is absent. Fails unless this is a map.
  ConfigNode operator[](const std::string& key) const;
  // The child, which must be present.
  ConfigNode Required(const std::string& key) const;
  bool Has(const std::string& key) const { return (*this)[key].defined(); }
  // A sequence's items. Fails unless this is a sequence.
  std::vector<ConfigNode> Items() const;
  // Fails on the first key not in `allowed`, listing the allowed ones.
  void CheckKeys(std::initializer_list<const char*> allowed) const;

  double Number() const;                    // finite
  double Number(double lo, double hi) const;  // finite, in [lo, hi]
  int64_t Integer(int64_t lo, int64_t hi) const;
  bool Bool() const;
  std::string String() const;               // a scalar
  // One of `choices`; fails listing them.
  std::string Keyword(std::initializer_list<const char*> choices) const;
  // A scalar or a sequence of scalars.
  std::vector<std::string> Strings() const;
  std::vector<double> Numbers() const;      // a number or a sequence of numbers

  // The given defaults when absent.
  double Number(double fallback) const { return defined() ? Number() : fallback; }
  std::string String(const std::string& fallback) const { return defined() ? String() : fallback; }
  bool Bool(bool fallback) const { return defined() ? Bool() : fallback; }

 private:
  ConfigNode(YAML::Node node, std::string path, YAML::Mark mark, std::shared_ptr<const std::string> file)
      : node_(std::move(node)), path_(std::move(path)), mark_(mark), file_(std::move(file)) {}
  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;  // this node's position, or its nearest ancestor's
  std::shared_ptr<const std::string> file_;
};

}  // namespace s2r
