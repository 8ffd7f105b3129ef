"""Offline training and evaluation jobs (not imported by the service at runtime).

`reranker.train_reranker` fine-tunes a cross-encoder for the rerank stage; `eval_reranker` measures
it on held-out conversations. Both run in-process on local data: no service, no network.
"""
