# db: settle --db postgres against a private PostgreSQL the test starts and stops by
# its pid (scripts/pg-local): statuses equal sleep mode's and the database's, bad
# input, and the database killed mid-run, then restarted.
set(LD_DB_DIR ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME db.settle COMMAND ${LD_DB_DIR}/test_db.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-db)
set_tests_properties(db.settle PROPERTIES LABELS db TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")
