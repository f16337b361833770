"""Version families: only the newest version of a document is searchable; older ones are archived.

A family is found, in this order (DESIGN.md "Versions", issue 3):

1. front matter ``family`` (or ``version_family``) with ``version``;
2. front matter ``supersedes: other/page.md``: this page is newer than that one (same family);
3. a file name ending in a version: ``plan_v2.md``, ``plan-v3.md``, ``plan.v2.md`` → family ``plan``;
4. version folders: a source with ``versions: folders`` holds one snapshot per top-level folder
   (``v1.10.26/``, ``v2.13.4/`` or ``2021-12/``, ``2025-02/``); the newest snapshot is active and every page
   of older snapshots is archived, including pages the new snapshot removed (they are no longer true);
5. a version folder anywhere else (issue 28: ``docs/v1/pricing.md`` beside ``docs/v2/pricing.md`` in a folder
   that also holds ``hr/`` and ``it/``): the page's family is its path without that folder, its version the
   folder's name (`config.starter.version_folder_of`). Page by page: ``docs/v1/old-only.md`` with no newer copy
   stays active. `version_chains` names each family of two or more, for ``init`` and the sync report.

Archived documents stay in the index and the store (``minerva docs --archived``) but never reach search.
Two documents claiming the same newest version are decided by the later ``last_modified``, with a warning.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath

import structlog

from config.starter import version_folder_of, version_key  # noqa: F401  (version_key: this module's API too)

log = structlog.get_logger(__name__)

_NAME_VERSION = re.compile(r"^(?P<family>.+?)[-_.]v(?P<version>\d+(?:\.\d+)*)$", re.I)
STAGES = ("active", "archived", "deprecated")


def family_of(rel_path: str, metadata: dict, versions_in_folders: bool) -> tuple[str, str]:
    """``(family, version)`` of a document, or ``("", "")`` when it has no versions.

    Args:
        rel_path: path relative to the source folder.
        metadata: front matter.
        versions_in_folders: the source keeps one snapshot per top-level folder.
    """
    path = PurePosixPath(rel_path)
    if versions_in_folders and len(path.parts) > 1:
        return "/".join(path.parts[1:]), path.parts[0]
    family = metadata.get("family") or metadata.get("version_family")
    version = metadata.get("version")
    match = _NAME_VERSION.match(path.stem)
    if match and not family:
        family = str(path.parent / match["family"]) if str(path.parent) != "." else match["family"]
        version = version if version is not None else match["version"]
    in_folder = version_folder_of(rel_path) if not family else None
    if in_folder:  # the innermost version folder: docs/v2/pricing.md → ("docs/pricing.md", "v2")
        family, version = in_folder
    if family and version is not None:
        return str(family), str(version)
    return "", ""


def version_chains(documents: dict[str, dict]) -> list[dict]:
    """Each version family of two or more documents, for people to check what was taken as versions:
    ``[{"collection", "family", "versions": [doc ids, oldest first], "active": doc id or ""}]``, by collection
    and family. Snapshot sources (``versions: folders``) are left out: their chains are the whole folder."""
    families: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for doc in documents.values():
        if doc.get("version_family") and not doc.get("versions_in_folders"):
            families[(doc["collection"], doc["version_family"])].append(doc)
    chains = []
    for (collection, family), members in sorted(families.items()):
        if len(members) < 2:
            continue
        members.sort(key=lambda d: (version_key(d["version"]), d["last_modified"]))
        active = next((d["doc_id"] for d in reversed(members) if d.get("stage") == "active"), "")
        chains.append({"collection": collection, "family": family, "versions": [d["doc_id"] for d in members],
                       "active": active})
    return chains


def assign_stages(documents: dict[str, dict]) -> list[str]:
    """Set ``stage`` on every document record from its family, version and front-matter stage, in place.

    Records need ``doc_id``, ``collection``, ``version_family``, ``version``, ``last_modified``,
    ``declared_stage`` (front matter ``stage``/``deprecated``, or ""), ``supersedes`` (doc_id or "").

    Returns:
        Warnings (also logged), e.g. two documents claiming the same newest version.
    """
    warnings = []
    superseded = {d["supersedes"] for d in documents.values() if d.get("supersedes")}
    families: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for doc in documents.values():
        doc["stage"] = doc.get("declared_stage") or "active"
        if doc["doc_id"] in superseded:
            doc["stage"] = "archived"
        if doc.get("version_family"):
            families[(doc["collection"], doc["version_family"])].append(doc)
    newest_snapshot = _newest_snapshots(documents)
    for (collection, family), members in families.items():
        if collection in newest_snapshot:
            for doc in members:
                if doc["version"] != newest_snapshot[collection]:
                    doc["stage"] = "archived"
            continue
        members.sort(key=lambda d: (version_key(d["version"]), d["last_modified"]))
        newest = members[-1]
        ties = [d for d in members if version_key(d["version"]) == version_key(newest["version"])]
        if len(ties) > 1:
            message = (f"version family {family!r} in {collection!r}: {len(ties)} documents claim version "
                       f"{newest['version']}; keeping the most recently modified, {newest['doc_id']}")
            warnings.append(message)
            log.warning("versions.tie", family=family, collection=collection, kept=newest["doc_id"])
        for doc in members:
            if doc is not newest:
                doc["stage"] = "archived"
    return warnings


def _newest_snapshots(documents: dict[str, dict]) -> dict[str, str]:
    """collection → newest snapshot folder, for collections whose documents live in version folders."""
    snapshots: dict[str, set[str]] = defaultdict(set)
    for doc in documents.values():
        if doc.get("versions_in_folders") and doc.get("version"):
            snapshots[doc["collection"]].add(doc["version"])
    return {c: max(v, key=version_key) for c, v in snapshots.items()}
