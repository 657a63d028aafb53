# perfwatch_embed(<target> NAME <fn> BASE <dir> FILES <f>...)
#
# Compiles the files into <target> so that the binary needs no files beside it
# at run time. Declares, in namespace perfwatch::embedded,
#   std::optional<std::string_view> <fn>(std::string_view relative_path);
#   std::vector<std::string_view> <fn>_paths();
# where relative_path is the file's path under BASE ("bench/trial.schema.json").
# The generated source is rebuilt whenever one of the files changes.
set(_perfwatch_embed_script ${CMAKE_CURRENT_LIST_DIR}/EmbedScript.cmake)

function(perfwatch_embed target)
  cmake_parse_arguments(E "" "NAME;BASE" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_${E_NAME}.cpp)
  string(REPLACE ";" "|" files_arg "${E_FILES}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DNAME=${E_NAME} -DBASE=${E_BASE} "-DFILES=${files_arg}"
            -DOUT=${out} -P ${_perfwatch_embed_script}
    DEPENDS ${E_FILES} ${_perfwatch_embed_script}
    COMMENT "Embedding ${E_NAME} (${E_BASE})"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
