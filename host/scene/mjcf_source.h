// The MJCF text being loaded, and the errors that point into it.
//
// Every loader failure reads "<file>:<line>: <element>: <what>" (see LoadError in mjcf_load.h);
// SourceFile turns an element's position in the text into that prefix, for every part of the
// loader.
#pragma once

#include <cstddef>
#include <pugixml.hpp>
#include <string>
#include <vector>

namespace s2r::mjcf {

class SourceFile {
 public:
  // `xml` must outlive this object; `file` stands for the file name in error messages.
  SourceFile(const std::string& xml, const std::string& file);

  const std::string& xml() const { return xml_; }
  const std::string& name() const { return file_; }

  // 1-based line of a byte offset into the text (0 for a negative offset).
  int LineOfOffset(ptrdiff_t offset) const;
  int LineOf(pugi::xml_node n) const { return LineOfOffset(n.offset_debug()); }
  // "<tag name='x'>", "<default class='x'>" or "<tag>".
  static std::string Describe(pugi::xml_node n);
  // Throws LoadError "<file>:<line>: <element>: <what>".
  [[noreturn]] void Fail(pugi::xml_node n, const std::string& what) const;
  // " (from default class 'x', line N)" when `src` is a default element, else "".
  std::string Origin(pugi::xml_node src) const;

 private:
  const std::string& xml_;
  const std::string file_;
  std::vector<size_t> newlines_;
};

}  // namespace s2r::mjcf
