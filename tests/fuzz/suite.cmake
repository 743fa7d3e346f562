# fuzz: the option parser and the job config it gives, fed arbitrary command lines.
# Every build replays the checked-in corpus through the harness (unit.fuzz_corpus).
# A clang build with LD_ASAN also builds the libFuzzer target and fuzzes for
# LD_FUZZ_SECONDS from that corpus (unit.fuzz_options); new inputs it finds go to the
# build folder, never into the checked-in corpus.
set(LD_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(LD_FUZZ_SECONDS 60 CACHE STRING "Seconds unit.fuzz_options fuzzes for")

add_executable(fuzz_replay ${LD_FUZZ_DIR}/fuzz_options.c ${LD_FUZZ_DIR}/replay.c)
target_link_libraries(fuzz_replay PRIVATE ld_options ld_jobs ld_runtime)
add_test(NAME unit.fuzz_corpus COMMAND fuzz_replay ${LD_FUZZ_DIR}/corpus)
set_tests_properties(unit.fuzz_corpus PROPERTIES LABELS unit TIMEOUT 60)

# The parser is compiled into the target itself, so libFuzzer sees its coverage.
if(LD_ASAN AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_executable(fuzz_options ${LD_FUZZ_DIR}/fuzz_options.c ${CMAKE_SOURCE_DIR}/mpi/options.c)
  target_include_directories(fuzz_options PRIVATE ${CMAKE_SOURCE_DIR}/mpi)
  target_compile_definitions(fuzz_options PRIVATE LD_VERSION="${PROJECT_VERSION}"
    LD_GIT_COMMIT="${LD_GIT_COMMIT}")
  target_compile_options(fuzz_options PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_options PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_options PRIVATE ld_jobs ld_runtime)
  set(LD_FUZZ_FOUND ${CMAKE_CURRENT_BINARY_DIR}/fuzz-found)
  file(MAKE_DIRECTORY ${LD_FUZZ_FOUND})
  add_test(NAME unit.fuzz_options
    COMMAND fuzz_options -max_total_time=${LD_FUZZ_SECONDS} -max_len=512 -timeout=10
            -print_final_stats=1 ${LD_FUZZ_FOUND} ${LD_FUZZ_DIR}/corpus)
  set_tests_properties(unit.fuzz_options PROPERTIES LABELS unit TIMEOUT 600)
endif()

# fuzz: the HTTP server's request reader (src/http_request.h), fed what clients send,
# in the same two builds: every build replays corpus-http (http.fuzz_corpus); a clang
# build with LD_ASAN fuzzes it for LD_FUZZ_SECONDS too (http.fuzz_request).
add_executable(fuzz_http_replay ${LD_FUZZ_DIR}/fuzz_http_request.c ${LD_FUZZ_DIR}/replay.c)
target_include_directories(fuzz_http_replay PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(fuzz_http_replay PRIVATE ld_runtime ld_http_parser)
add_test(NAME http.fuzz_corpus COMMAND fuzz_http_replay ${LD_FUZZ_DIR}/corpus-http)
set_tests_properties(http.fuzz_corpus PROPERTIES LABELS http TIMEOUT 60)

# The reader is compiled into the target itself, so libFuzzer sees its coverage.
if(LD_ASAN AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_executable(fuzz_http_request ${LD_FUZZ_DIR}/fuzz_http_request.c
    ${CMAKE_SOURCE_DIR}/src/http_request.c)
  target_include_directories(fuzz_http_request PRIVATE ${CMAKE_SOURCE_DIR}/src
    ${CMAKE_SOURCE_DIR}/src/include)
  target_compile_options(fuzz_http_request PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_http_request PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_http_request PRIVATE ld_http_parser PkgConfig::UV)
  set(LD_FUZZ_HTTP_FOUND ${CMAKE_CURRENT_BINARY_DIR}/fuzz-http-found)
  file(MAKE_DIRECTORY ${LD_FUZZ_HTTP_FOUND})
  add_test(NAME http.fuzz_request
    COMMAND fuzz_http_request -max_total_time=${LD_FUZZ_SECONDS} -max_len=2048 -timeout=10
            -print_final_stats=1 ${LD_FUZZ_HTTP_FOUND} ${LD_FUZZ_DIR}/corpus-http)
  set_tests_properties(http.fuzz_request PROPERTIES LABELS http TIMEOUT 600)
endif()
