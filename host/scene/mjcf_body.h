// MJCF body tree: <worldbody> and the bodies, joints, geoms, sites and inertials below it.
//
// Bodies are placed in world coordinates as they are read (pos and orientation compose down the
// tree); a body moves iff it or one of its ancestors has a joint.
#pragma once

#include <pugixml.hpp>

#include "host/scene/mjcf_loader.h"

namespace s2r::mjcf {

// Reads one <worldbody> and everything below it into state->model (whose body 0, the world, is
// already there). Needs the <compiler> settings and default classes read before.
void ReadWorldBody(pugi::xml_node n, LoadState* state);

}  // namespace s2r::mjcf
