#!/usr/bin/env python3
"""validate-json.py SCHEMA [FILE]: validates JSON (FILE or stdin) against a
JSON Schema with the jsonschema library; prints OK or every error, and
exits 1 when there is one."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
data = json.load(open(sys.argv[2]) if len(sys.argv) > 2 else sys.stdin)
validator = jsonschema.Draft202012Validator(schema)
jsonschema.Draft202012Validator.check_schema(schema)
errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
for e in errors:
    print("INVALID at /%s: %s" % ("/".join(str(p) for p in e.path), e.message))
if errors:
    sys.exit(1)
print("OK")
