"""navlog's reports over exported tables, as a PySpark job for a real cluster.

    spark-submit tools/spark/navlog_job.py TREE [--out DIR] [--funnel SCREEN SCREEN ...]

TREE is what `navlog export` wrote (one host, or a fleet's hosts under host= partitions), local
or in object storage (s3a://bucket/navlog, hdfs://...). Each table is read with the column types
navlog ships beside it (TABLE/_schema.spark), never inferred. The job prints (or writes to
--out as JSON Lines, one directory per report):

- screens:     per screen: views, distinct sessions, dwell total (µs in the foreground, F4)
- transitions: from screen, to screen, how, count
- sessions:    distinct sessions, with their events, visits and anomalies summed; a session that
               moved hosts (its app reconnected elsewhere) has a row per host and counts once
- funnel:      with --funnel A B ...: sessions that reached A, then B after it, ... (by time, so
               that the parts of a session on several hosts line up), the same as navlog query funnel

Tests/engines/test_fleet.py submits it with spark-submit (local[2]) over three hosts' exports and
compares each report with navlog's.
"""

import argparse
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def table(spark, tree, name):
    """One exported table, with navlog's column types; partition columns (host, day) from the paths."""
    path = tree.rstrip("/") + "/" + name
    return spark.read.schema(read_text(spark, path + "/_schema.spark").strip()).json(path)


def read_text(spark, path):
    """A small file, through Hadoop's file system (local, s3a, hdfs...). Spark's readers skip
    names starting with '_' even when asked for them by name."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    system = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = system.open(hadoop_path)
    try:
        reader = jvm.java.io.BufferedReader(jvm.java.io.InputStreamReader(stream, "UTF-8"))
        lines = []
        line = reader.readLine()
        while line is not None:
            lines.append(line)
            line = reader.readLine()
        return "\n".join(lines)
    finally:
        stream.close()


def reports(spark, tree, funnel_steps):
    visits = table(spark, tree, "screen_visits")
    transitions = table(spark, tree, "transitions")
    sessions = table(spark, tree, "sessions")
    result = {
        "screens": visits.groupBy("screen", "storyboard_id").agg(
            F.count(F.lit(1)).alias("views"), F.countDistinct("session").alias("sessions"), F.sum("dwell").alias("dwell_total")),
        "transitions": transitions.groupBy("from", "to", "how").agg(F.count(F.lit(1)).alias("count")),
        "sessions": sessions.groupBy("session").agg(
            F.sum("events").alias("events"), F.sum("visits").alias("visits"), F.sum("anomalies").alias("anomalies"),
            F.max(F.col("ended").cast("int")).alias("ended"))
        .agg(F.count(F.lit(1)).alias("sessions"), F.sum("events").alias("events"), F.sum("visits").alias("visits"),
             F.sum("anomalies").alias("anomalies"), F.sum("ended").alias("ended")),
    }
    if funnel_steps:
        result["funnel"] = funnel(visits, funnel_steps)
    return result


def funnel(visits, steps):
    """Sessions that focused steps[0], then steps[1] at or after it, and so on (each step's first
    time after the step before), as navlog query funnel counts them."""
    reached = visits.where(F.col("screen") == steps[0]).groupBy("session").agg(F.min("start").alias("at"))
    rows = [(1, steps[0], reached.count())]
    for number, screen in enumerate(steps[1:], start=2):
        later = (visits.where(F.col("screen") == screen).alias("v")
                 .join(reached.alias("r"), F.col("v.session") == F.col("r.session"))
                 .where(F.col("v.start") > F.col("r.at")))
        reached = later.groupBy(F.col("v.session").alias("session")).agg(F.min("v.start").alias("at"))
        rows.append((number, screen, reached.count()))
    return visits.sparkSession.createDataFrame(rows, "step INT, screen STRING, sessions LONG")


def main(argv):
    parser = argparse.ArgumentParser(description="navlog's screens, transitions, sessions and funnels over navlog export's tables.")
    parser.add_argument("tree", help="the export's directory (local path or URI)")
    parser.add_argument("--out", help="write each report as JSON Lines under OUT/REPORT (default: print them)")
    parser.add_argument("--funnel", nargs="+", metavar="SCREEN", help="funnel steps, in order")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("navlog-reports").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    for name, frame in reports(spark, args.tree, args.funnel).items():
        if args.out:
            frame.coalesce(1).write.mode("overwrite").json(args.out.rstrip("/") + "/" + name)
        else:
            for row in frame.collect():
                print(json.dumps({"report": name, **row.asDict()}, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
