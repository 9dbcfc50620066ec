#!/usr/bin/env python3
"""Fails if a public or open declaration of the library has no `///` summary.

Reads the symbol graphs `swift package generate-documentation` extracted for the AlamofireNIO and
AlamofireNIOLoading targets (run it first) and lists every public or open symbol declared in this
repository's Sources/ without a documentation comment. Extension blocks are not declarations and
are skipped; symbols a type inherits from protocols of other modules have no location here.
"""
import glob
import json
import os
import sys
import urllib.parse

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sources = os.path.join(root, "Sources") + "/"
graphs = [
    path
    for path in glob.glob(os.path.join(root, ".build", "*", "extracted-symbols", "*", "*", "*.symbols.json"))
    if os.path.basename(os.path.dirname(path)) in ("AlamofireNIO", "AlamofireNIOLoading")
]
if not graphs:
    sys.exit("error: no symbol graphs; run swift package generate-documentation first")

total, missing = 0, []
for path in graphs:
    for symbol in json.load(open(path))["symbols"]:
        location = urllib.parse.unquote(symbol.get("location", {}).get("uri", ""))
        if sources not in location or symbol.get("accessLevel") not in ("public", "open"):
            continue
        if symbol["kind"]["identifier"] == "swift.extension":
            continue
        total += 1
        if not symbol.get("docComment"):
            line = symbol["location"]["position"]["line"] + 1
            missing.append(f"{location.split(sources)[1]}:{line}: {symbol['names']['title']}")

print(f"{total - len(missing)} of {total} public declarations have a summary")
if total == 0:
    sys.exit("error: no public declaration was found in the symbol graphs; the check read nothing")
if missing:
    print("error: public declarations without a /// summary:")
    print("\n".join(sorted(set(missing))))
    sys.exit(1)
