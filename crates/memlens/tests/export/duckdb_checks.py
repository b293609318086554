"""Runs the DuckDB queries of docs/export.md on an export, as a user would:
in DIR (which holds the export `app.parquet/`), the `duckdb/views` block, then
every `sql/*` and `duckdb/*` block. Prints name -> rows as JSON; the Rust test
(tests/cli/export_parquet.rs) compares them with `memlens summary --json`.

usage: duckdb_checks.py DOC DIR
"""

import os
import sys

import doc_queries


def main():
    doc, where = sys.argv[1], sys.argv[2]
    try:
        import duckdb
    except ImportError:
        sys.exit("python3 has no duckdb module: run .ci/run (it installs it)")
    blocks = doc_queries.queries(doc)
    os.chdir(where)
    con = duckdb.connect()
    for statement in doc_queries.statements(blocks["duckdb/views"]):
        con.execute(statement)
    results = {}
    for name, query in doc_queries.checked(blocks, "duckdb"):
        cursor = con.execute(query)
        columns = [d[0] for d in cursor.description]
        results[name] = [dict(zip(columns, row)) for row in cursor.fetchall()]
    # Not queries of the document: the usable sizes, which the test compares
    # with the program's own malloc_usable_size, and the rows in file order.
    cursor = con.execute(
        "SELECT DISTINCT size, usable_size FROM allocations ORDER BY size"
    )
    results["usable"] = [{"size": s, "usable_size": u} for s, u in cursor.fetchall()]
    cursor = con.execute("SELECT free_seq, address FROM allocations")
    results["order"] = [{"free_seq": f, "address": a} for f, a in cursor.fetchall()]
    doc_queries.print_results(results)


if __name__ == "__main__":
    main()
