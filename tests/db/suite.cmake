# db: settle --db postgres against a stock PostgreSQL the test starts and stops by its
# pid (scripts/pg-local): every strategy at -n 1 and -n 4, statuses equal sleep mode's
# and the database's, a run too big for it refused, bad input, the private servers
# closed to others, and the database killed mid-run, then restarted. Its runs have
# timeouts of their own (120 s each), well inside the test's.
set(LD_DB_DIR ${CMAKE_CURRENT_LIST_DIR})
# timeout: each test's own limit, under CTest's, so that its EXIT trap stops its
# servers (a CTest timeout is a SIGKILL, and the next run reaps what that leaves).
add_test(NAME db.settle COMMAND timeout -k 20 540 ${LD_DB_DIR}/test_db.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-db)
set_tests_properties(db.settle PROPERTIES LABELS db TIMEOUT 600 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")
# db.slurm_rank0: --db-url rank0 across two emulated Slurm nodes (tests/slurm/lib.sh's
# cluster): the other node's ranks use rank 0's server. Skipped (77) where slurmd
# cannot run; RUN_SERIAL: it starts daemons and loads every core.
add_test(NAME db.slurm_rank0
  COMMAND timeout -k 20 150 ${CMAKE_SOURCE_DIR}/tests/slurm/test_db_rank0.sh $<TARGET_FILE:loomdist>
          ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/slurm-db ${LD_PYTHON})
set_tests_properties(db.slurm_rank0 PROPERTIES LABELS "db;slurm" TIMEOUT 180 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77)
