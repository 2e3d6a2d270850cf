#!/usr/bin/env python3
"""Build step: writes a header holding a text file as `constexpr std::string_view NAME`.

    embed_text.py INPUT OUTPUT NAME
"""
import sys

src, dst, name = sys.argv[1:4]
text = open(src, encoding="utf-8").read()
delim = "embed"
if ")" + delim + '"' in text:
    sys.exit(f"{src}: contains the raw-string delimiter")
with open(dst, "w", encoding="utf-8") as out:
    out.write(f"// Generated from {src.rsplit('/', 1)[-1]} by embed_text.py; do not edit.\n")
    out.write("#pragma once\n#include <string_view>\n")
    out.write(f'constexpr std::string_view {name} = R"{delim}({text}){delim}";\n')
