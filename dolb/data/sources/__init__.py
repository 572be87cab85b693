"""Where datasets come from: seeded generators and importers of other formats, both
kept in the data cache.

Two registries (:class:`dolb.registry.Registry`) hold the sources by name:
:data:`GENERATORS` and :data:`IMPORTERS` (the examples list them; ``csv``, ``parquet``,
``feather``, ``npy`` and ``npz`` import one's own files). Every entry declares its
parameters (with docs), the parts it makes and its reference. A new source is one
module that builds a :class:`~dolb.data.sources.generators.Generator` or
:class:`~dolb.data.sources.importers.Importer` and adds it to its registry; importing
it here registers it.

Modules, lowest first: :mod:`~dolb.data.sources.cache` (the on-disk cache of made
parts), :mod:`~dolb.data.sources.source` (what every source declares),
:mod:`~dolb.data.sources.generators` and :mod:`~dolb.data.sources.importers` (the two
kinds and their registries), then one module per source.

Examples
--------
>>> GENERATORS.names()
['irma', 'rcv1_resample', 'sparse_text', 'spirals']
>>> IMPORTERS.names()
['csv', 'faces', 'feather', 'mnist', 'npy', 'npz', 'parquet', 'rcv1', 'svmlight']
>>> print(GENERATORS["irma"].params["noise"].doc)
half-width of the uniform noise added to y
"""

from dolb.data.sources import (  # noqa: F401  (register the sources)
    arrays,
    faces,
    irma,
    mnist,
    rcv1,
    rcv1_resample,
    sparse_text,
    spirals,
    svmlight,
    tables,
)
from dolb.data.sources.generators import GENERATORS, generate, materialize
from dolb.data.sources.importers import IMPORTERS, import_dataset

__all__ = ["GENERATORS", "IMPORTERS", "generate", "import_dataset", "materialize"]
