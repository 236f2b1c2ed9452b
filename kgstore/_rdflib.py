"""The store as an ``rdflib.Dataset``, through oxrdflib (rdflib's Store plugin API on
pyoxigraph): rdflib programs (SPARQL through rdflib, serializers, pySHACL) read the
store's own triples, no copy made.

It reads by default. Writes through rdflib go straight to Oxigraph and bypass the
catalog (labels, facts, search), so they are refused unless ``writable=True``. SPARQL
through the Dataset is guarded like every other entry point: SERVICE is refused unless
``[sparql] allow_service``, LOAD always.
"""
from __future__ import annotations

import rdflib
from oxrdflib import OxigraphStore

from ._query_guard import refused_operation
from .errors import QueryRefusedError, ReadOnlyError


class GuardedOxigraphStore(OxigraphStore):
    """oxrdflib's store over a kgstore store's pyoxigraph Store, with kgstore's rules."""

    def __init__(self, store, *, writable: bool):
        super().__init__(store=store.rdf)
        self._kgstore_path = store.path
        self._allow_service = store.config.sparql.allow_service
        self._writable = writable

    def _check_writable(self) -> None:
        if not self._writable:
            raise ReadOnlyError(
                f"the rdflib Dataset of {self._kgstore_path} is read-only: writes through rdflib bypass "
                "kgstore's catalog (labels, search); use `kgstore ingest`, or Store.rdflib(writable=True) "
                "if you accept that")

    def query(self, query, initNs, initBindings, queryGraph, **kwargs):  # noqa: N803 (rdflib's names)
        if isinstance(query, str):
            refused = refused_operation(query, allow_service=self._allow_service)
            if refused:
                raise QueryRefusedError(*refused)
        return super().query(query, initNs, initBindings, queryGraph, **kwargs)

    def update(self, update, initNs, initBindings, queryGraph, **kwargs):  # noqa: N803
        self._check_writable()
        if isinstance(update, str):  # LOAD and SERVICE reach the network even from a writable Dataset
            refused = refused_operation(update, allow_service=self._allow_service, allow_update=True)
            if refused:
                raise QueryRefusedError(*refused)
        return super().update(update, initNs, initBindings, queryGraph, **kwargs)

    def add(self, triple, context, quoted=False):
        self._check_writable()
        return super().add(triple, context, quoted)

    def addN(self, quads):  # noqa: N802 (rdflib's name)
        self._check_writable()
        return super().addN(quads)

    def remove(self, triple, context=None):
        self._check_writable()
        return super().remove(triple, context)

    def add_graph(self, graph):
        self._check_writable()
        return super().add_graph(graph)

    def remove_graph(self, graph):
        self._check_writable()
        return super().remove_graph(graph)


def rdflib_dataset(store, *, writable: bool = False) -> rdflib.Dataset:
    """An ``rdflib.Dataset`` over ``store`` (a :class:`kgstore.Store`), with the store's
    prefixes bound. See :meth:`kgstore.Store.rdflib`."""
    if writable:
        store._check_writable()
    dataset = rdflib.Dataset(store=GuardedOxigraphStore(store, writable=writable))
    for prefix, namespace in store.config.prefixes.items():
        dataset.bind(prefix, namespace, override=True)
    return dataset


__all__ = ["rdflib_dataset", "GuardedOxigraphStore"]
