"""One SparkSession for a batch command: local mode by default, any cluster via `--master`.

PySpark is imported here, never at CLI start (`citebound --help` stays fast). Python workers
run the interpreter of this process (`PYSPARK_PYTHON`), so executors import the same citebound;
on a cluster, install citebound (with its extras) on every node, or ship it with
`spark-submit --py-files`.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from citebound.errors import ConfigError

# Spark settings a batch needs regardless of the cluster: no UI port, no progress bar on
# stderr, Arrow for mapInPandas, and reuse of Python workers so each loads the store and models
# once (worker reuse is Spark's default; it is set so a cluster default cannot turn it off),
# and no speculative task copies: a second copy of a `batch answer` task would call the model
# again for the same rows (a retried task, which runs after the failed one, skips rows staged).
BATCH_CONF: dict[str, str] = {
    "spark.speculation": "false",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.sql.session.timeZone": "UTC",
}


def java_missing_reason() -> str | None:
    """Why Spark cannot start here, or None when a Java runtime is available."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return None
    if shutil.which("java"):
        return None
    return (
        "Spark needs a Java 17+ runtime and none was found (install openjdk-17-jre-headless "
        "or set JAVA_HOME)"
    )


def spark_session(master: str | None = None, *, app_name: str = "citebound-batch") -> Any:
    """The active SparkSession, or a new one on `master` (default `local[*]`).

    Raises ConfigError when pyspark or Java is missing, with what to install.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ConfigError("citebound batch needs PySpark: pip install 'citebound[spark]'") from None
    why = java_missing_reason()
    if why is not None:
        raise ConfigError(why)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master or os.environ.get("CITEBOUND_SPARK_MASTER", "local[*]"))
    for key, value in BATCH_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
