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

int SourceFile::LineOf(pugi::xml_node n) const {
  auto it = included_.find(n.internal_object());
  if (it != included_.end()) return it->second.line;
  return LineOfOffset(n.offset_debug());
}

const std::string& SourceFile::FileOf(pugi::xml_node n) const {
  auto it = included_.find(n.internal_object());
  return it != included_.end() ? included_files_[it->second.file] : file_;
}

std::string SourceFile::Where(pugi::xml_node n) const {
  return FileOf(n) + ":" + std::to_string(LineOf(n));
}

// the index of `s` in `list`, appended if absent
static int IndexOf(std::vector<std::string>* list, const std::string& s) {
  for (size_t i = 0; i < list->size(); ++i) {
    if ((*list)[i] == s) return static_cast<int>(i);
  }
  list->push_back(s);
  return static_cast<int>(list->size() - 1);
}

void SourceFile::MarkIncluded(pugi::xml_node copy, const std::string& file, int line, pugi::xml_node inc) {
  const std::string outer = IncludedFrom(inc);
  const int via = IndexOf(&vias_, Where(inc) + (outer.empty() ? "" : ", included from " + outer));
  included_[copy.internal_object()] = {IndexOf(&included_files_, file), line, via};
}

std::string SourceFile::IncludedFrom(pugi::xml_node n) const {
  auto it = included_.find(n.internal_object());
  return it != included_.end() ? vias_[it->second.via] : std::string();
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
  const std::string via = IncludedFrom(n);
  throw LoadError(Where(n) + ": " + Describe(n) + ": " + what +
                  (via.empty() ? "" : " (in a file included from " + via + ")"));
}

std::string SourceFile::Origin(pugi::xml_node src) const {
  pugi::xml_node parent = src.parent();
  if (!parent || std::string(parent.name()) != "default") return "";
  std::string cls = parent.attribute("class") ? parent.attribute("class").value() : "main";
  std::string where = included_.count(src.internal_object()) ? Where(src) : "line " + std::to_string(LineOf(src));
  return " (from default class '" + cls + "', " + where + ")";
}

}  // namespace s2r::mjcf
