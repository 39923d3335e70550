"""Neural-network building blocks: `lazyarr.nn.functional`."""
from lazyarr.nn import functional  # noqa: F401
