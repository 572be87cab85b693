"""Importers: files in other formats converted once into dataset stores (placeholder
registry; the importers themselves are being written)."""

from __future__ import annotations

from pathlib import Path

from dolb.errors import ConfigError

IMPORTERS: dict = {}


def import_dataset(name: str, params: dict, directory: Path):
    if name not in IMPORTERS:
        raise ConfigError(f"unknown importer {name!r} (known: {', '.join(sorted(IMPORTERS)) or 'none'})")
    return IMPORTERS[name](params, directory)
