# http: the runtime's HTTP/1.1 server and client helpers (lib/http/include/http.h), and the
# clearinghouse (services/clearinghouse/clearinghouse.h) with its executable. Only 127.0.0.1, free
# ports, bounded waits. The fuzz target for the request reader is in tests/fuzz/.
set(LD_HTTP_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(test_http_client ${LD_HTTP_DIR}/test_http_client.c)
target_link_libraries(test_http_client PRIVATE ld_http PkgConfig::UV)
target_include_directories(test_http_client PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
add_test(NAME http.client COMMAND test_http_client)

# One test per client, well-behaved or hostile; each ends with a fresh client served.
add_executable(test_http_server ${LD_HTTP_DIR}/test_http_server.c)
target_link_libraries(test_http_server PRIVATE ld_http ld_rand PkgConfig::UV)
target_include_directories(test_http_server PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit
  ${LD_HTTP_DIR})
set(LD_HTTP_CASES keepalive pipeline orphan held disconnect slowloris oversized garbage
  exhaustion requests nonreader server-close)
foreach(case ${LD_HTTP_CASES})
  add_test(NAME http.server.${case} COMMAND test_http_server ${case})
endforeach()
list(TRANSFORM LD_HTTP_CASES PREPEND http.server. OUTPUT_VARIABLE LD_HTTP_SERVER_TESTS)

# The clearinghouse's answers are sleep mode's statuses, trade by trade.
add_executable(test_http_plan ${LD_HTTP_DIR}/test_http_plan.c)
target_link_libraries(test_http_plan PRIVATE ld_jobs ld_http PkgConfig::UV)
target_include_directories(test_http_plan PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit
  ${LD_HTTP_DIR})
add_test(NAME http.plan COMMAND test_http_plan)

# Clients that pipeline 64 KiB bodies to /think?ms=60000 and reset, over and over:
# the clearinghouse's memory stays bounded and the excess is answered 503.
add_test(NAME http.held COMMAND ${LD_HTTP_DIR}/test_clearinghouse_held.py
  $<TARGET_FILE:loomdist-clearinghouse>)

add_test(NAME http.cli COMMAND ${LD_HTTP_DIR}/test_clearinghouse_cli.sh
  $<TARGET_FILE:loomdist-clearinghouse> ${CMAKE_CURRENT_BINARY_DIR}/http-cli)

set_tests_properties(http.client http.plan http.cli http.held ${LD_HTTP_SERVER_TESTS} PROPERTIES
  LABELS http TIMEOUT 60)
set_tests_properties(http.cli PROPERTIES SKIP_RETURN_CODE 77)
