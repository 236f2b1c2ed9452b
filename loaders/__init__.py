"""Streaming readers of knowledge-graph dumps. Each yields checkpointed ``kgstore.Batch``es.

Loaders are looked up by format name through ``kgstore.loader_for`` so that nothing here is
imported before it is needed.
"""
from ._input import DumpReader, LineChunk, open_decompressed

__all__ = ["DumpReader", "LineChunk", "open_decompressed"]
