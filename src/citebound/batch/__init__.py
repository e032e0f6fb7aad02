"""Batch on Apache Spark: bulk answering, re-validation, evaluation and ingest.

Import the submodules directly (`citebound.batch.answer`, ...): this package imports nothing
heavy, and pyspark only inside `citebound.batch.session.spark_session`. See docs/batch.md.
"""
