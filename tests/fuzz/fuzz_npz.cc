// libFuzzer harness for the .npz reader (host/sweep/npz.h) that `s2r sweep --policy-net FILE` runs
// on a user's file: arbitrary bytes are read as an .npz the way LoadPolicyNet reads one.
//
// A finding is anything but a clean refusal (NpzError): a crash, a sanitizer report, another
// exception type (std::bad_alloc included: the reader must check a member's declared sizes before
// it allocates), or an accepted archive whose arrays do not hold what their shapes say.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <typeinfo>

#include "host/sweep/npz.h"

namespace {

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "\nfuzz_npz FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, s2r::NpyArray> arrays;
  try {
    arrays = s2r::ReadNpz(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npz");
  } catch (const s2r::NpzError&) {
    return 0;
  } catch (const std::exception& e) {
    Finding(std::string("an exception other than NpzError: ") + typeid(e).name() + ": " + e.what());
  }
  for (const auto& [name, a] : arrays) {
    unsigned __int128 n = 1;
    for (int64_t d : a.shape) {
      if (d < 0) Finding(name + ": a negative dimension");
      n *= static_cast<unsigned __int128>(d);
      if (n > (unsigned __int128)1 << 64) Finding(name + ": an accepted shape whose size overflows");
    }
    const size_t held = a.is_string ? a.strings.size() : a.values.size();
    if (n != held) Finding(name + ": an accepted array whose values do not match its shape");
    if (a.is_string && !a.values.empty()) Finding(name + ": a string array with values");
  }
  return 0;
}
