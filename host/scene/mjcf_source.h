// The MJCF text being loaded, and the errors that point into it.
//
// Every loader failure reads "<file>:<line>: <element>: <what>" (see LoadError in mjcf_load.h);
// SourceFile turns an element's position in the text into that prefix, for every part of the
// loader.
#pragma once

#include <cstddef>
#include <pugixml.hpp>
#include <string>
#include <unordered_map>
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
  // Line of `n` in this text (for an element copied in from an included file: its line there).
  int LineOf(pugi::xml_node n) const;
  // "<file>:<line>" of `n`: this file, or the included file an element was copied from.
  std::string Where(pugi::xml_node n) const;
  // The file `n` was written in: this one, or the included file it was copied from.
  const std::string& FileOf(pugi::xml_node n) const;
  // Records that `copy` (an element of this document) was copied from `file`, line `line`, by the
  // <include> element `inc` (<include> expansion, mjcf_include.cc).
  void MarkIncluded(pugi::xml_node copy, const std::string& file, int line, pugi::xml_node inc);
  // "a.xml:3" for an element copied in by the <include> at a.xml:3, "b.xml:2, included from a.xml:3"
  // where that <include> was itself copied in; "" for an element of this file.
  std::string IncludedFrom(pugi::xml_node n) const;
  // "<tag name='x'>", "<default class='x'>" or "<tag>".
  static std::string Describe(pugi::xml_node n);
  // Throws LoadError "<file>:<line>: <element>: <what>", and " (in a file included from ...)" for
  // an element an <include> copied in.
  [[noreturn]] void Fail(pugi::xml_node n, const std::string& what) const;
  // " (from default class 'x', line N)" when `src` is a default element, else "".
  std::string Origin(pugi::xml_node src) const;

 private:
  const std::string& xml_;
  const std::string file_;
  std::vector<size_t> newlines_;
  struct IncludedAt {
    int file;  // index into included_files_
    int line;
    int via;   // index into vias_: IncludedFrom
  };
  std::vector<std::string> vias_;
  std::vector<std::string> included_files_;
  std::unordered_map<const void*, IncludedAt> included_;  // element copied from an included file
};

}  // namespace s2r::mjcf
