# Build-time provenance: writes OUTPUT, a C++ source defining accel::build_provenance() with the
# source tree's git commit, its dirty flag (tracked files only), the sha256 of the tracked files'
# diff against HEAD when dirty (so two dirty builds of one commit differ) and the project version.
# Run with `cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -P provenance.cmake` on every build;
# it rewrites OUTPUT only when its content changes, so an unchanged tree recompiles nothing.
# It must never change the repository: git runs with --no-optional-locks (no index refresh).
foreach(var SOURCE_DIR OUTPUT VERSION)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "provenance.cmake: -D${var}=... is required")
  endif()
endforeach()

set(commit "unknown")
set(dirty "false")
set(diff_sha256 "")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR} rev-parse HEAD
    OUTPUT_VARIABLE head
    RESULT_VARIABLE head_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(head_rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(commit "${head}")
    # Untracked files (build trees, caches) do not make a build dirty; edits to tracked ones do.
    execute_process(
      COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR} status --porcelain
              --untracked-files=no
      OUTPUT_VARIABLE status
      RESULT_VARIABLE status_rc
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    # A failing `git status` cannot vouch for a clean tree.
    if(NOT status_rc EQUAL 0 OR NOT status STREQUAL "")
      set(dirty "true")
      # Binary-safe, without external diff drivers, so the digest depends on the content alone.
      execute_process(
        COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR} diff HEAD --binary
                --no-ext-diff --no-textconv
        OUTPUT_VARIABLE diff
        RESULT_VARIABLE diff_rc
        ERROR_QUIET)
      if(diff_rc EQUAL 0)
        string(SHA256 diff_sha256 "${diff}")
      endif()
    endif()
  endif()
endif()

set(content "// Generated at build time by cmake/provenance.cmake; do not edit.
#include \"harness/environment.h\"

namespace accel {

const BuildProvenance& build_provenance() {
  static const BuildProvenance p{\"${commit}\", ${dirty}, \"${VERSION}\", \"${diff_sha256}\"};
  return p;
}

}  // namespace accel
")

set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
