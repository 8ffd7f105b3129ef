"""Offline training and evaluation jobs. They import the product; the product never imports them.

`reranker.train_reranker` fine-tunes a cross-encoder for the rerank stage (`palimpsest train-reranker`,
registered by `cli` as a plugin of the product's CLI); `eval_reranker` measures it on held-out
conversations. Both run in-process on local data: no service, no network.
"""
