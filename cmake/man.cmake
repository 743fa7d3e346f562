# Man pages, made at build time by help2man from each command's own --help and
# --version, so a page cannot say other than the program does. Installed in
# share/man/man1. Sanitizer builds skip them: their binaries are for the tests.
if(LD_ASAN OR LD_TSAN OR LD_UBSAN)
  set(LD_MAN_DEFAULT OFF)
else()
  set(LD_MAN_DEFAULT ON)
endif()
option(LD_MAN "Generate and install the man pages (needs help2man)" ${LD_MAN_DEFAULT})
if(NOT LD_MAN)
  return()
endif()
find_program(LD_HELP2MAN help2man)
if(NOT LD_HELP2MAN)
  message(FATAL_ERROR "help2man not found: install it (Debian: apt-get install help2man, "
    "or scripts/setup), or configure without man pages: -DLD_MAN=OFF")
endif()

set(LD_MAN_DIR ${CMAKE_BINARY_DIR}/man)
set(LD_MAN_PAGES "")

# ld_man(NAME PROGRAM DEPENDS... NAME_LINE): man/NAME.1 from PROGRAM's --help and
# --version, rebuilt when what it DEPENDS on changes. The environment is fixed so the
# page is the same wherever it is built: C locale, no bytecode left in the tree.
function(ld_man name program what)
  set(page ${LD_MAN_DIR}/${name}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LD_MAN_DIR}
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg
      ${LD_HELP2MAN} --no-info --section=1 --name=${what} --output=${page} ${program}
    DEPENDS ${ARGN}
    COMMENT "help2man: ${name}.1" VERBATIM)
  set(LD_MAN_PAGES ${LD_MAN_PAGES} ${page} PARENT_SCOPE)
endfunction()

ld_man(loomdist $<TARGET_FILE:loomdist>
  "distributed benchmark of threading models: MPI ranks, green threads, one HDF5 file"
  loomdist)
ld_man(loomdist-clearinghouse $<TARGET_FILE:loomdist-clearinghouse>
  "settle's clearinghouse checks as an HTTP/1.1 service" loomdist-clearinghouse)
ld_man(loomdist-load $<TARGET_FILE:loomdist-load>
  "closed-loop HTTP/1.1 load generator, as wrk" loomdist-load)
ld_man(loomdist-forks $<TARGET_FILE:loomdist-forks>
  "run loomdist in fresh processes and score it as JMH does" loomdist-forks)
ld_man(loomdist-pool-server $<TARGET_FILE:loomdist-pool-server>
  "the pooling study's server under test, started by loomdist --jobs pool"
  loomdist-pool-server)
ld_man(loomdist-pingpong $<TARGET_FILE:loomdist-pingpong>
  "MPI latency and bandwidth, for the simulation's platforms" loomdist-pingpong)

# The analysis' commands run as installed: from a copy of the package in the build
# tree, beside the _version.py an install gets (cmake/install.cmake). They need a
# Python with h5py, numpy and matplotlib (analysis/find-python); without one their
# pages are left out, and said so.
execute_process(COMMAND ${PROJECT_SOURCE_DIR}/analysis/find-python
  RESULT_VARIABLE LD_ANALYSIS_PYTHON_RC OUTPUT_QUIET ERROR_QUIET)
if(LD_ANALYSIS_PYTHON_RC EQUAL 0)
  set(stage ${CMAKE_BINARY_DIR}/share/loomdist/analysis)
  add_custom_command(OUTPUT ${stage}/.staged
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${LD_ANALYSIS_MODULES}
      ${LD_ANALYSIS_SCRIPTS} ${stage}
    COMMAND ${CMAKE_COMMAND} -E touch ${stage}/.staged
    DEPENDS ${LD_ANALYSIS_MODULES} ${LD_ANALYSIS_SCRIPTS} ${LD_ANALYSIS_VERSION}
    COMMENT "analysis: staged as installed, for its man pages" VERBATIM)
  ld_man(loomdist-report ${stage}/loomdist-report
    "turn loomdist HDF5 runs into a report of tables, figures and findings"
    ${stage}/.staged)
  ld_man(loomdist-models ${stage}/loomdist-models
    "the four-model study's figure and table from loomdist-forks --json files"
    ${stage}/.staged)
  ld_man(loomdist-pool ${stage}/loomdist-pool
    "the pooling study's table from loomdist --jobs pool HDF5 files" ${stage}/.staged)
else()
  message(WARNING "no Python here imports h5py, numpy and matplotlib: the analysis "
    "commands' man pages are not built (Debian: apt-get install python3-h5py "
    "python3-numpy python3-matplotlib)")
endif()

add_custom_target(ld_man ALL DEPENDS ${LD_MAN_PAGES})
install(FILES ${LD_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
