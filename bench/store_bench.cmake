# s2r_store_bench: write throughput of the Zarr v3 store (host/store) beside zarr-python and
# tensorstore; run through bench/run_store_bench.sh. Included from the top-level CMakeLists.txt
# after the s2r_store target. It calls c-blosc and zstd directly only for its --profile codec floor.
add_executable(s2r_store_bench bench/store_write_bench.cc)
target_link_libraries(s2r_store_bench PRIVATE s2r_store s2r_codec_libs)
target_compile_options(s2r_store_bench PRIVATE -Wall -Wextra)
