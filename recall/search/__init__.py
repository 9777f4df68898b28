"""Search over recall's memories: keyword ranking and local embeddings.

Submodules are imported directly (``recall.search.embedder``) so that importing this package never
drags in numpy or onnxruntime.
"""
