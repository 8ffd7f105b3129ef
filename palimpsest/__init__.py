"""Palimpsest's Python package for users of the service.

The service itself lives in `app` and `workers`; this package is what an application imports to
talk to it: `palimpsest.client` (sync and async HTTP clients with typed models).

    from palimpsest import Palimpsest
"""
from palimpsest.client import AsyncPalimpsest, Palimpsest

__all__ = ["AsyncPalimpsest", "Palimpsest"]
