# fuzz: libFuzzer harnesses over what reads untrusted bytes, each checking properties
# that must hold for every input (the harness's header comment says which). Each
# target NAME has a minimised corpus in corpus/NAME/, checked in, which every build
# replays through the same harness with replay.c (LABEL.fuzz_NAME_corpus), so a gcc
# build keeps it passing. A clang build with LD_ASAN also builds the libFuzzer target
# and fuzzes for LD_FUZZ_SECONDS from that corpus (LABEL.fuzz_NAME); new inputs it
# finds go to the build folder (fuzz-found/NAME); the ones worth keeping are merged
# into the corpus by hand (docs/reliability.md says how).
set(LD_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(LD_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz target fuzzes for")
set(LD_FUZZ_CLANG OFF)
if(LD_ASAN AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(LD_FUZZ_CLANG ON)
endif()

# ld_fuzz(NAME LABEL MAX_LEN HARNESS file [UNDER_TEST files...] [LIBS libs...]
#         [INCLUDES dirs...] [DEFINES defs...])
# UNDER_TEST is compiled into both executables, so that libFuzzer sees its coverage
# (the libraries are not built for it); LIBS gives the rest, and must not hold it.
function(ld_fuzz name label max_len)
  cmake_parse_arguments(F "" "HARNESS" "UNDER_TEST;LIBS;INCLUDES;DEFINES" ${ARGN})
  set(targets fuzz_${name}_replay)
  add_executable(fuzz_${name}_replay ${F_HARNESS} ${F_UNDER_TEST} ${LD_FUZZ_DIR}/replay.c)
  add_test(NAME ${label}.fuzz_${name}_corpus
    COMMAND fuzz_${name}_replay ${LD_FUZZ_DIR}/corpus/${name})
  set_tests_properties(${label}.fuzz_${name}_corpus PROPERTIES LABELS ${label} TIMEOUT 60)
  if(LD_FUZZ_CLANG)
    list(APPEND targets fuzz_${name})
    add_executable(fuzz_${name} ${F_HARNESS} ${F_UNDER_TEST})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    set(found ${CMAKE_CURRENT_BINARY_DIR}/fuzz-found/${name})
    file(MAKE_DIRECTORY ${found})
    add_test(NAME ${label}.fuzz_${name}
      COMMAND fuzz_${name} -max_total_time=${LD_FUZZ_SECONDS} -max_len=${max_len}
              -timeout=10 -print_final_stats=1 ${found} ${LD_FUZZ_DIR}/corpus/${name})
    set_tests_properties(${label}.fuzz_${name} PROPERTIES LABELS ${label} TIMEOUT 600)
  endif()
  foreach(t ${targets})
    target_include_directories(${t} PRIVATE ${F_INCLUDES})
    target_compile_definitions(${t} PRIVATE ${F_DEFINES})
    target_link_libraries(${t} PRIVATE ${F_LIBS})
  endforeach()
endfunction()

# loomdist's option parser and the job config it gives, fed arbitrary command lines.
ld_fuzz(options unit 512 HARNESS ${LD_FUZZ_DIR}/fuzz_options.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/driver/options.c
  INCLUDES ${CMAKE_SOURCE_DIR}/driver
  DEFINES LD_VERSION="${PROJECT_VERSION}" LD_GIT_COMMIT="${LD_GIT_COMMIT}"
  LIBS ld_jobs ld_runtime)

# The HTTP server's request reader (lib/http/http_request.h), fed what clients send.
ld_fuzz(http_request http 2048 HARNESS ${LD_FUZZ_DIR}/fuzz_http_request.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/lib/http/http_request.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/http ${CMAKE_SOURCE_DIR}/lib/http/include
  LIBS ld_http_parser PkgConfig::UV)

# The clients' response parser (lib/http/http.c), fed what servers send back.
ld_fuzz(http_response http 2048 HARNESS ${LD_FUZZ_DIR}/fuzz_http_response.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/lib/http/http.c ${CMAKE_SOURCE_DIR}/lib/http/http_request.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/http ${CMAKE_SOURCE_DIR}/lib/http/include
  LIBS ld_http_parser PkgConfig::UV)

# The query parser every clearinghouse request's parameters go through (lib/http/http.c).
ld_fuzz(http_query http 512 HARNESS ${LD_FUZZ_DIR}/fuzz_http_query.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/lib/http/http.c ${CMAKE_SOURCE_DIR}/lib/http/http_request.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/http ${CMAKE_SOURCE_DIR}/lib/http/include
  LIBS ld_http_parser PkgConfig::UV)

# wrk's and loomdist-load's output, read into the pool job's figures (jobs/pool/pool_load.c).
ld_fuzz(wrk_output pool 2048 HARNESS ${LD_FUZZ_DIR}/fuzz_wrk_output.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/jobs/pool/pool_load.c
  INCLUDES ${CMAKE_SOURCE_DIR}/jobs/pool
  LIBS ld_harness)

# The helper programs' command lines (fuzz_cli.h): each harness includes its program's
# main.c, and lib/cli/cli.c where the program uses it, so both are under test.
set(LD_FUZZ_CLI_DEFINES LD_VERSION="${PROJECT_VERSION}" LD_GIT_COMMIT="${LD_GIT_COMMIT}")
ld_fuzz(cli_clearinghouse http 512 HARNESS ${LD_FUZZ_DIR}/fuzz_cli_clearinghouse.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/cli DEFINES ${LD_FUZZ_CLI_DEFINES} LIBS ld_clearinghouse)
ld_fuzz(cli_load pool 512 HARNESS ${LD_FUZZ_DIR}/fuzz_cli_load.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/cli DEFINES ${LD_FUZZ_CLI_DEFINES} LIBS ld_http)
ld_fuzz(cli_pool_server pool 512 HARNESS ${LD_FUZZ_DIR}/fuzz_cli_pool_server.c
  INCLUDES ${CMAKE_SOURCE_DIR}/lib/cli DEFINES ${LD_FUZZ_CLI_DEFINES} LIBS ld_pool_server)
ld_fuzz(cli_forks models 512 HARNESS ${LD_FUZZ_DIR}/fuzz_cli_forks.c
  UNDER_TEST ${CMAKE_SOURCE_DIR}/tools/forks/study.c ${CMAKE_SOURCE_DIR}/tools/forks/jmh.c
  INCLUDES ${CMAKE_SOURCE_DIR}/tools/forks ${CMAKE_SOURCE_DIR}/lib/cli ${HDF5_INCLUDE_DIRS}
  DEFINES ${HDF5_C_DEFINITIONS} ${LD_FUZZ_CLI_DEFINES}
  LIBS ld_stats MPI::MPI_C ${HDF5_C_LIBRARIES})
