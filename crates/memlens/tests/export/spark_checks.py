"""Runs the Spark SQL of docs/export.md over several exports with PySpark in
local mode, as a user would: in DIR (which holds `traces/*/`, one export per
trace), the `spark/views` block, then every `sql/*` and `spark/*` query.
Prints name -> rows as JSON; the Rust test (tests/cli/export_parquet.rs)
compares them with the sum of the traces' `memlens summary --json`.

One core and one shuffle partition keep Spark's start-up and the few-thousand
row queries to seconds.

usage: spark_checks.py DOC DIR
"""

import os
import sys

import doc_queries


def main():
    doc, where = sys.argv[1], sys.argv[2]
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        sys.exit("python3 has no pyspark module: run .ci/run (it installs it)")
    blocks = doc_queries.queries(doc)
    os.chdir(where)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("memlens-export-check")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        exec(blocks["spark/views"], {"spark": spark})
        results = {}
        for name, query in doc_queries.checked(blocks, "spark"):
            results[name] = [row.asDict() for row in spark.sql(query).collect()]
    finally:
        spark.stop()
    doc_queries.print_results(results)


if __name__ == "__main__":
    main()
