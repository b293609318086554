"""The copy-paste queries of docs/export.md, by the name of the
`<!-- check: NAME -->` comment above each code block, so that the tests run
exactly what the document shows (its checks: duckdb_checks.py, spark_checks.py).
"""

import json
import re
import sys
from decimal import Decimal

_BLOCK = re.compile(r"<!-- check: (\S+) -->\s*\n```\w*\n(.*?)\n```", re.S)


def queries(doc):
    """Every checked block of the document at `doc`: name -> text."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    found = {m.group(1): m.group(2) for m in _BLOCK.finditer(text)}
    if not found:
        sys.exit(f"{doc} has no `<!-- check: NAME -->` blocks")
    return found


def checked(blocks, engine):
    """(name, query) of every query block an engine runs, by name: the portable
    `sql/*` ones and the engine's own `ENGINE/*`, its `ENGINE/views` apart."""
    for name, sql in sorted(blocks.items()):
        if name == f"{engine}/views" or not name.startswith(("sql/", f"{engine}/")):
            continue
        (query,) = statements(sql)
        yield name, query


def statements(sql):
    """The statements of a block, without their final semicolons."""
    return [s.strip() for s in sql.split(";") if s.strip()]


def plain(value):
    """A query result's value as JSON holds it (engines return big sums as Decimal)."""
    if isinstance(value, Decimal):
        return int(value)
    return value


def print_results(results):
    """Prints name -> rows (each row a column -> value object) as one JSON line."""
    print(json.dumps(results, ensure_ascii=False, default=plain))
