# s2r_store_bench: write throughput of the Zarr v3 store (host/store) beside zarr-python and
# tensorstore; run through bench/run_store_bench.sh. Included from the top-level CMakeLists.txt
# after the s2r_store target. It calls c-blosc and zstd directly only for its --profile codec floor.
add_executable(s2r_store_bench bench/store_write_bench.cc)
target_link_libraries(s2r_store_bench PRIVATE s2r_store ${S2R_BLOSC_LIBRARY})
target_include_directories(s2r_store_bench PRIVATE ${S2R_BLOSC_INCLUDE_DIR})
if(S2R_ZSTD_FOUND)
  target_link_libraries(s2r_store_bench PRIVATE PkgConfig::S2R_ZSTD)
else()
  target_include_directories(s2r_store_bench PRIVATE ${S2R_ZSTD_INCLUDE_DIR})
  target_link_libraries(s2r_store_bench PRIVATE ${S2R_ZSTD_LIBRARY})
endif()
target_compile_options(s2r_store_bench PRIVATE -Wall -Wextra)
