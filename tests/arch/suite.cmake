# arch: the rules the layout promises, checked on the source tree and the binary.
set(LD_ARCH_DIR ${CMAKE_CURRENT_LIST_DIR})

# The driver knows jobs only through their declarations: no job name, no job's field.
add_test(NAME arch.driver_generic COMMAND ${LD_ARCH_DIR}/test_driver_generic.sh
  ${CMAKE_SOURCE_DIR}/driver ${CMAKE_SOURCE_DIR}/jobs/registry.c)
set_tests_properties(arch.driver_generic PROPERTIES LABELS arch TIMEOUT 30)

# docs/schema.md's schema block is what the jobs declare, as `loomdist --schema` prints it.
add_test(NAME arch.schema_doc COMMAND ${LD_ARCH_DIR}/test_schema_doc.sh
  $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR}/docs/schema.md)
set_tests_properties(arch.schema_doc PROPERTIES LABELS arch TIMEOUT 30
  ENVIRONMENT "${LD_MPI_ENV}")

# docs/options.md is scripts/gen-docs' page of `loomdist --help`, and README.md's
# table of the most used options names real ones.
add_test(NAME arch.options_doc COMMAND ${LD_ARCH_DIR}/test_options_doc.sh
  $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR})
set_tests_properties(arch.options_doc PROPERTIES LABELS arch TIMEOUT 30
  ENVIRONMENT "${LD_MPI_ENV}")

# Every relative link of README.md, ARCHITECTURE.md, docs/ and results/ resolves.
add_test(NAME arch.doc_links COMMAND ${LD_ARCH_DIR}/test_doc_links.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(arch.doc_links PROPERTIES LABELS arch TIMEOUT 30)
