#include "host/scene/mjcf_source.h"

#include <algorithm>

#include "host/scene/mjcf_load.h"

namespace s2r::mjcf {

SourceFile::SourceFile(const std::string& xml, const std::string& file) : xml_(xml), file_(file) {
  for (size_t i = 0; i < xml_.size(); ++i) {
    if (xml_[i] == '\n') newlines_.push_back(i);
  }
}

int SourceFile::LineOfOffset(ptrdiff_t offset) const {
  if (offset < 0) return 0;
  return static_cast<int>(
             std::upper_bound(newlines_.begin(), newlines_.end(), static_cast<size_t>(offset)) -
             newlines_.begin()) +
         1;
}

std::string SourceFile::Describe(pugi::xml_node n) {
  std::string s = "<" + std::string(n.name());
  if (n.attribute("name")) {
    s += " name='" + std::string(n.attribute("name").value()) + "'";
  } else if (std::string(n.name()) == "default" && n.attribute("class")) {
    s += " class='" + std::string(n.attribute("class").value()) + "'";
  }
  return s + ">";
}

void SourceFile::Fail(pugi::xml_node n, const std::string& what) const {
  throw LoadError(file_ + ":" + std::to_string(LineOf(n)) + ": " + Describe(n) + ": " + what);
}

std::string SourceFile::Origin(pugi::xml_node src) const {
  pugi::xml_node parent = src.parent();
  if (!parent || std::string(parent.name()) != "default") return "";
  std::string cls = parent.attribute("class") ? parent.attribute("class").value() : "main";
  return " (from default class '" + cls + "', line " + std::to_string(LineOf(src)) + ")";
}

}  // namespace s2r::mjcf
