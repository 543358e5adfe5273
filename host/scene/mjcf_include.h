// <include file="..."/>: MJCF's textual inclusion. The included file is a whole MJCF document
// (root <mujoco>, whose attributes are not used); its root's children replace the <include>
// element, wherever it stands (top level or inside a section), before anything else is read.
//
// A relative `file` is looked for, as MuJoCo 4 does, first relative to the main file's folder and
// then relative to the folder of the file that holds the <include> (so a robot folder whose files
// include their neighbours works when included from elsewhere). A built-in scene ("builtin:<name>") may include only other
// built-in files, named by their path under configs/robots or configs/scenes. Elements copied in
// keep their own file and line for errors (SourceFile::MarkIncluded); a missing or unreadable file
// and an include cycle are errors that name the chain of includes.
#pragma once

#include <functional>
#include <pugixml.hpp>
#include <string>

#include "host/scene/mjcf_source.h"

namespace s2r::mjcf {

// Reads the file that `<include file=file>` in file `from` (of the document `main`) names: sets
// *name (its name for errors and cycle detection) and *text, or returns false with *error.
using IncludeReader = std::function<bool(const std::string& main, const std::string& from,
                                         const std::string& file, std::string* name,
                                         std::string* text, std::string* error)>;

// The reader for a document named `from`: built-in files for "builtin:..." names, else the file
// system relative to the including file's folder.
IncludeReader DefaultIncludeReader(const std::string& from);

// Replaces every <include> below `root` (a document of `file`) by the included files' contents,
// recursively.
void ExpandIncludes(pugi::xml_node root, SourceFile* file, const IncludeReader& read);

}  // namespace s2r::mjcf
