# install: `cmake --install` into a temporary prefix, and the installed commands used
# from another folder, as a user of an install (no root, no network).
add_test(NAME install.prefix
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_install.sh ${CMAKE_BINARY_DIR}
    ${PROJECT_SOURCE_DIR} ${LD_MAN})
set_tests_properties(install.prefix PROPERTIES LABELS install TIMEOUT 300
  ENVIRONMENT "${LD_MPI_ENV}")
