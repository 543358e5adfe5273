// MJCF <custom>: user <numeric>/<text> data (accepted and ignored) and the s2r_ settings, which
// are <numeric> elements with names starting with "s2r_": the `custom` names of the fields in
// kernels/model_fields.h (docs/mjcf_subset.md).
#pragma once

#include <pugixml.hpp>
#include <vector>

#include "host/scene/mjcf_loader.h"

namespace s2r::mjcf {

// Reads all <custom> sections of the document (in document order) and applies the s2r_ settings
// to state->model. Runs last: s2r_x:<entity> settings name entities read before.
void ReadCustom(const std::vector<pugi::xml_node>& sections, LoadState* state);

}  // namespace s2r::mjcf
