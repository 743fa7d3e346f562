# arch: the rules the layout promises, checked on the source tree and the binary.
set(LD_ARCH_DIR ${CMAKE_CURRENT_LIST_DIR})

# The driver knows jobs only through their declarations: no job name, no job's field.
add_test(NAME arch.driver_generic COMMAND ${LD_ARCH_DIR}/test_driver_generic.sh
  ${CMAKE_SOURCE_DIR}/mpi ${CMAKE_SOURCE_DIR}/jobs/registry.c)
set_tests_properties(arch.driver_generic PROPERTIES LABELS arch TIMEOUT 30)

# README.md's schema block is what the jobs declare, as `loomdist --schema` prints it.
add_test(NAME arch.schema_readme COMMAND ${LD_ARCH_DIR}/test_schema_readme.sh
  $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR}/README.md)
set_tests_properties(arch.schema_readme PROPERTIES LABELS arch TIMEOUT 30
  ENVIRONMENT "${LD_MPI_ENV}")

# README.md's usage table names every option --help lists.
add_test(NAME arch.usage_readme COMMAND ${LD_ARCH_DIR}/test_usage_readme.sh
  $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR}/README.md)
set_tests_properties(arch.usage_readme PROPERTIES LABELS arch TIMEOUT 30
  ENVIRONMENT "${LD_MPI_ENV}")
