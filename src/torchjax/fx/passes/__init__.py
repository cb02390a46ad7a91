"""torch.fx.passes: graph passes (shape_prop.ShapeProp)."""

from . import shape_prop  # noqa: F401
