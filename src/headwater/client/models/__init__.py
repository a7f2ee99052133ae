"""The client's result types: frozen dataclasses named after what the API answers."""

from headwater.client.models.admin import *  # noqa: F403
from headwater.client.models.admin import __all__ as _admin
from headwater.client.models.analysis import *  # noqa: F403
from headwater.client.models.analysis import __all__ as _analysis
from headwater.client.models.governance import *  # noqa: F403
from headwater.client.models.governance import __all__ as _governance
from headwater.client.models.lineage import *  # noqa: F403
from headwater.client.models.lineage import __all__ as _lineage
from headwater.client.models.marquez import *  # noqa: F403
from headwater.client.models.marquez import __all__ as _marquez
from headwater.client.models.quality import *  # noqa: F403
from headwater.client.models.quality import __all__ as _quality
from headwater.client.models.run_activity import *  # noqa: F403
from headwater.client.models.run_activity import __all__ as _run_activity

__all__ = sorted(  # noqa: PLE0605
    [*_admin, *_analysis, *_governance, *_lineage, *_marquez, *_quality, *_run_activity]
)
