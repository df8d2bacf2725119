"""Batches: one bundle run over many inputs (`runs`) and the results file a rerun reads
(`results`). A durable batch's queue is `durable/batch_queue.py`."""
