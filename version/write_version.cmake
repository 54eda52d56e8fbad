# Writes version.cc from version.cc.in; rewrites it only when its text changes,
# so an unchanged commit rebuilds nothing.
#   cmake -DSOURCE_DIR=... -DTEMPLATE=... -DOUTPUT=... -DNPU_VERSION=... -DNPU_BUILD_TYPE=...
#         [-DNPU_GIT_COMMIT_GIVEN=HASH] -P write_version.cmake
set(NPU_GIT_COMMIT "${NPU_GIT_COMMIT_GIVEN}")
find_program(GIT git)
if(NPU_GIT_COMMIT STREQUAL "" AND GIT AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE NPU_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(NPU_GIT_COMMIT "")
  else()
    # Tracked files changed since the commit: say so, the binary is not that commit.
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} diff-index --quiet HEAD --
                    RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND NPU_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
if(NPU_BUILD_TYPE STREQUAL "")
  set(NPU_BUILD_TYPE "unspecified")
endif()
configure_file(${TEMPLATE} ${OUTPUT}.tmp @ONLY)
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
