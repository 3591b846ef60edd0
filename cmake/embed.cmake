# embed.cmake: write the bytes of IN as a C array (NAME, NAME_len) into OUT; an absent IN
# gives an empty array. Used for the CrystalPerf classifier model shipped in the library.
if(EXISTS "${IN}")
  file(READ "${IN}" hex HEX)
else()
  set(hex "")
endif()
string(LENGTH "${hex}" n2)
math(EXPR n "${n2} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake: do not edit */\n#include <stddef.h>\n"
     "extern const unsigned char ${NAME}[];\nextern const size_t ${NAME}_len;\n"
     "const unsigned char ${NAME}[] = {\n${body}0};\nconst size_t ${NAME}_len = ${n};\n")
