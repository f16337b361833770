"""Looking at a store without opening it: its schema version, read-only, for ``minerva doctor``.

`FeedbackStore.open` migrates and creates; a health check must change nothing, so this module connects on its
own (a SQLite file read-only, PostgreSQL in a read-only transaction) and only reads the version.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from feedback.db import begin_read, create_engine, is_url, redact
from feedback.errors import StoreUnavailable
from feedback.migrations import current_version


def stored_schema_version(target: str | Path) -> int:
    """The schema version of the store at ``target`` (0 for an empty one), read without changing anything.

    Args:
        target: an existing SQLite file, or a database URL (`feedback.db.create_engine`).

    Returns:
        The version; compare it with ``len(feedback.MIGRATIONS)`` (higher: made by a newer Minerva).

    Raises:
        StoreUnavailable: the file is not a SQLite database or cannot be read, or the server cannot be reached.
    """
    shown = redact(target)
    try:
        if is_url(target) and sa.make_url(str(target)).get_backend_name() != "sqlite":
            engine = create_engine(target)
        else:
            path = Path(sa.make_url(str(target)).database or "") if is_url(target) else Path(target)
            # read-only URI: no journal-mode switch, no file created, no pragma written
            engine = sa.create_engine(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true",
                                      connect_args={"timeout": 2})
    except (ValueError, sa.exc.ArgumentError) as error:
        raise StoreUnavailable(f"cannot open feedback database {shown}: {error}") from error
    try:
        with begin_read(engine) as conn:
            return current_version(conn)
    except sa.exc.DBAPIError as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        raise StoreUnavailable(f"{shown} cannot be opened: {reason}") from error
    finally:
        engine.dispose()
