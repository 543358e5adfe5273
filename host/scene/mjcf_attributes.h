// MJCF attributes: the schema of every element the subset knows, strict number syntax, angle
// units, and typed access to attributes once they are checked.
//
// Each element is checked against its attribute schema (names, number syntax and counts) when it
// is reached (CheckAttributes); the typed accessors below assume that check has passed.
#pragma once

#include <Eigen/Dense>
#include <pugixml.hpp>
#include <string>
#include <vector>

#include "host/scene/mjcf_source.h"

namespace s2r::mjcf {

using Vec3d = Eigen::Vector3d;
using Quatd = Eigen::Quaterniond;

constexpr double kPiD = 3.14159265358979323846;

// --- attribute schema ----------------------------------------------------------------------------

enum class AttrKind {
  kText,     // any string
  kReals,    // min_count..max_count finite numbers
  kInt,      // one integer
  kKeyword,  // one of a space-separated list
  kVisual,   // visual-only: accepted and ignored
};

struct AttrSpec {
  const char* name;
  AttrKind kind;
  int min_count;
  int max_count;
  const char* keywords;
  bool default_ok;  // may appear on an element inside <default>
};

// Attribute schema of every element the subset knows; nullptr for an unknown element.
const std::vector<AttrSpec>* SchemaFor(const std::string& tag);

const AttrSpec* FindSpec(const std::vector<AttrSpec>& schema, const std::string& name);

// --- number parsing ------------------------------------------------------------------------------

std::vector<std::string> SplitWords(const std::string& s);

// Strict: the whole token must be a decimal number ("nan", "inf", "0x10", "1,5" are not).
bool ParseReal(const std::string& token, double* out);

bool ParseInt(const std::string& token, long* out);

std::string Num(double v);

std::string Quote(const std::string& s);

// --- angle units ---------------------------------------------------------------------------------

// <compiler angle="degree|radian">: the unit of the angles written in the file (MJCF's default is
// degree). Internally every angle is in radians.
enum class AngleUnit { kDegree, kRadian };

double ToRadians(double v, AngleUnit unit);

// --- schema checks -------------------------------------------------------------------------------

// Fails unless every attribute of `n` is in its element's schema, given once, with valid syntax
// (and, `in_default`, allowed inside <default>). Fails for an element the subset does not know.
// `schema`: the schema's name when it is not the tag (an <equality>'s <joint>: "equality.joint").
void CheckAttributes(const SourceFile& file, pugi::xml_node n, bool in_default,
                     const char* schema = nullptr);
// Fails if `n` holds non-blank text.
void CheckNoText(const SourceFile& file, pugi::xml_node n);

// --- attribute access (attributes are already syntax-checked) ------------------------------------

std::vector<double> Reals(pugi::xml_node n, const char* attr);
double Real1(pugi::xml_node n, const char* attr);
Vec3d Real3(pugi::xml_node n, const char* attr);
std::string Word(pugi::xml_node n, const char* attr);

}  // namespace s2r::mjcf
