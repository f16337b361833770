"""`minerva doctor`: check a deployment end to end and say what to fix.

One `Check` per line, in the order a deployment is built: the config loads; every source folder exists, is
readable and holds pages; the index exists, was built with the configured embedding model and has its
answer-unit vectors; the feedback store opens and its schema is current; the Slack tokens are present, of
the right type and accepted (`bot.slack.check`); the token has every scope ``manifest.yml`` asks for (Slack
returns the granted ones in ``auth.test``'s ``x-oauth-scopes`` header; the channel history scopes only when a
channel uses ``respond: questions``, `bot.slack.channels.CHANNEL_HISTORY_SCOPES`); and each alert/digest channel
(``alerts.yaml`` routing, else ``slack.alert_channel``/``slack.digest_channel``) exists and has the bot as
a member (``conversations.info``).

Nothing is changed: the store is opened read-only, the index is only loaded, Slack is only asked.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import structlog
import yaml

from config import expert_target
from knowledge.embedding import model_can_load, unknown_model_message

log = structlog.get_logger(__name__)

#: The app manifest whose bot scopes the token must have (the repository's ``manifest.yml``).
MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"
#: Seconds each Slack Web API call may take.
TIMEOUT = 3.0
OK, FAIL, SKIP = "ok", "fail", "skip"
_MARKS = {OK: "✓", FAIL: "✗", SKIP: "–"}
#: Slack channel ids: C… public, G… private (older), D… direct messages.
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")
_SCOPE_FIX = ("add them under OAuth & Permissions → Bot Token Scopes at https://api.slack.com/apps (or update the "
              "app from manifest.yml), reinstall the app to the workspace, and put the new token in SLACK_BOT_TOKEN")


@dataclass(frozen=True)
class Check:
    """One line of the report.

    Attributes:
        name: what was checked, e.g. ``"config"``, ``"source plans"``, ``"channel C0123"``.
        status: `OK`, `FAIL` (must be fixed) or `SKIP` (not checked, or nothing to check).
        detail: what was found.
        fix: what to do about it ("" when nothing).
    """

    name: str
    status: str
    detail: str
    fix: str = ""


def run_checks(settings, home: str | Path, *, config_error: Exception | None = None, env: dict | None = None,
               manifest: str | Path | None = MANIFEST, slack: bool = True, timeout: float = TIMEOUT) -> list[Check]:
    """Run every check of a deployment.

    Args:
        settings: the loaded `config.Settings` (with recorded home sources), or None when it failed to load.
        home: MINERVA_HOME.
        config_error: why the config did not load (reported as the first, failed, check).
        env: the environment holding SLACK_BOT_TOKEN etc.; default ``os.environ``.
        manifest: the Slack app manifest whose bot scopes are required; None skips the scope check.
        slack: False skips the Slack checks (a CLI-only deployment).
        timeout: seconds per Slack Web API call.

    Returns:
        The checks in report order. Never raises for a broken deployment: every failure is a `FAIL` check.
    """
    home = Path(home)
    env = os.environ if env is None else env
    checks = [_config_check(settings, config_error)]
    if settings is not None:
        checks += _source_checks(settings, home)
        checks.append(_index_check(settings, home))
    else:
        checks.append(Check("sources, index", SKIP, "not checked: the config did not load"))
    checks.append(_store_check(home, settings))
    if slack:
        token_check, identity = _token_check(env, timeout)
        checks += [token_check, _scope_check(identity, manifest, settings),
                   *_channel_checks(settings, identity, env, timeout),
                   *_expert_group_checks(settings, identity, env, timeout)]
    else:
        checks.append(Check("slack", SKIP, "not checked (--no-slack)"))
    for check in checks:
        log.info("doctor.check", name=check.name, status=check.status, detail=check.detail)
    return checks


def exit_code(checks: list[Check]) -> int:
    """0 when nothing must be fixed, 1 when any check failed."""
    return 1 if any(c.status == FAIL for c in checks) else 0


def render(checks: list[Check]) -> str:
    """The report as text: ``✓``/``✗``/``–``, the check's name and what was found, then ``→ fix`` lines, then a
    closing line with the number of problems."""
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{_MARKS[c.status]} {c.name.ljust(width)}  {c.detail}")
        if c.fix:
            lines.append(f"  {' ' * width}  → {c.fix}")
    failed = sum(c.status == FAIL for c in checks)
    lines.append(f"\n{failed} problem(s) to fix." if failed else f"\nAll good: {sum(c.status == OK for c in checks)} "
                 "checks passed.")
    return "\n".join(lines)


def to_json(checks: list[Check]) -> str:
    """``{"ok": bool, "checks": [{name, status, detail, fix}, ...]}``."""
    return json.dumps({"ok": exit_code(checks) == 0, "checks": [asdict(c) for c in checks]}, ensure_ascii=False)


# --- config, sources, index, store --------------------------------------------------------------------


def _config_check(settings, error: Exception | None) -> Check:
    if settings is None:
        return Check("config", FAIL, f"does not load: {error}",
                     "fix the file named above (docs/configuration.md lists every key); `minerva init FOLDER` "
                     "writes a starter one")
    where = str(settings.path) if settings.path else "the bundled sample config (set MINERVA_CONFIG or --config)"
    if not model_can_load(settings.embedding.model):
        return Check("config", FAIL, f"{where}: {unknown_model_message(settings.embedding.model)}",
                     "set embedding.model to one of the names above (docs/configuration.md)")
    return Check("config", OK, f"{where}: {len(settings.sources)} source(s), embedding model "
                               f"{settings.embedding.model}")


def _skipped_at_last_sync(home: Path, doc_ids: set[str]) -> list[dict]:
    """Entries ``{path, reason}`` of the newest sync report (`knowledge.sync`, ``{home}/sync-reports``) that
    skipped one of ``doc_ids``: files listed to read that did not make it into the index (binary, not UTF-8,
    broken front matter); [] without a report."""
    from knowledge.sync import latest_sync_report

    skipped = latest_sync_report(home).get("skipped", [])
    return [entry for entry in skipped if isinstance(entry, dict) and entry.get("path") in doc_ids]


def _ignored_owners(home: Path, source: str) -> list[str]:
    """Doc ids of ``source`` whose front matter ``owner`` the newest sync ignored (an email or a name, not a Slack
    id: `knowledge.sync` warns); a newcomer's `owner: jane.doe@…` passed `doctor` with no word."""
    from knowledge.sync import OWNER_IGNORED, latest_sync_report

    warnings = latest_sync_report(home).get("warnings", [])
    return [w.split(OWNER_IGNORED, 1)[0] for w in warnings
            if isinstance(w, str) and w.startswith(f"{source}:") and OWNER_IGNORED in w]


def _source_checks(settings, home: Path) -> list[Check]:
    from config.home_sources import load_home_sources
    from knowledge.errors import KnowledgeError
    from knowledge.git_source import list_git
    from knowledge.sources import list_folder

    if not settings.sources:
        return [Check("sources", FAIL, "no source configured",
                      "`minerva init FOLDER` writes a config with one, or `minerva ingest FOLDER` records one")]
    try:
        recorded = {s.name for s in load_home_sources(home)}
    except Exception:  # noqa: BLE001 - a broken sources.yaml already failed the config check
        recorded = set()
    checks = []
    for source in settings.sources:
        name, folder = f"source {source.name}", Path(source.path)
        where = (f"`minerva sources remove {source.name}` (recorded by `minerva ingest FOLDER`)"
                 if source.name in recorded else "`path` in the config")
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            checks.append(Check(name, FAIL, f"{folder} {what}", f"create or mount it, or fix {where}"))
            continue
        if not os.access(folder, os.R_OK | os.X_OK):
            checks.append(Check(name, FAIL, f"{folder} is not readable by this user",
                                "give the user that runs Minerva read access (chmod/chown)"))
            continue
        try:
            files, skipped = list_git(source, None)[:2] if source.git else list_folder(source)
        except KnowledgeError as exc:
            checks.append(Check(name, FAIL, str(exc), f"fix {where}, or set `git: false`"))
            continue
        unlistable = [path for path, reason in skipped if reason.startswith("cannot list")]
        if not files:
            checks.append(Check(name, FAIL, f"{folder}: no file with a configured extension "
                                            f"({', '.join(source.extensions)})",
                                f"put pages there, or set `extensions` of source {source.name!r}"))
        elif unlistable:
            checks.append(Check(name, FAIL, f"{folder}: {len(files)} file(s), but {len(unlistable)} folder(s) "
                                            f"cannot be listed, e.g. {unlistable[0]}",
                                "give the user that runs Minerva read access to them"))
        else:
            unread = _skipped_at_last_sync(home, {f.doc_id for f in files})
            note = (f"; the last sync skipped {len(unread)} of them, e.g. {unread[0]['path']}: {unread[0]['reason']}"
                    f" (`minerva ingest` lists them all)" if unread else "")
            ownerless = _ignored_owners(home, source.name)
            note += (f"; {len(ownerless)} page owner(s) ignored as no Slack id, e.g. {ownerless[0]} (write `U…` or "
                     f"`S…`; `minerva ingest` names them)" if ownerless else "")
            checks.append(Check(name, OK, f"{folder}: {len(files)} file(s) to read{note}"))
    return checks


def _index_check(settings, home: Path) -> Check:
    from knowledge.errors import KnowledgeError
    from knowledge.index import INDEX_DIR_ENV, load_generation
    from knowledge.sync import is_foreign

    model = settings.embedding.model
    if not model_can_load(model):  # the config check says why; a rebuild could not load it either
        return Check("index", SKIP, "not checked: the configured embedding model does not load (see config)", "")
    config = f" --config {settings.path}" if settings.path else ""  # the same config, or ingest reads another
    rebuild = f"run `minerva{config} --home {home} ingest`"
    if os.environ.get(INDEX_DIR_ENV, "").strip():  # a shared folder: the ingest host publishes, not this replica
        rebuild = (f"run `minerva ingest` on the ingest host with the same {INDEX_DIR_ENV} "
                   f"({os.environ[INDEX_DIR_ENV]}), or check that this machine mounts that folder")
    try:
        index = load_generation(home, model=model)
    except KnowledgeError as exc:
        return Check("index", FAIL, str(exc), rebuild)
    except Exception as exc:  # noqa: BLE001 - a damaged file in the generation folder
        return Check("index", FAIL, f"cannot be loaded ({type(exc).__name__}: {exc})",
                     f"{rebuild} to build a new generation")
    name, dim = "index", int(index.manifest.get("dim", 0))
    if not index.chunks:
        return Check(name, FAIL, f"{index.name} holds no chunk: nothing can be answered", rebuild)
    problem = _vector_problem(index.vectors, len(index.chunks), dim, "chunk vectors")
    if problem is None:
        if index.units is None:
            problem = "has no answer-unit vectors (written by an older Minerva): answers fall back to lexical evidence"
        else:
            problem = _vector_problem(index.units.vectors, int(index.units.offsets[-1]), dim, "answer-unit vectors")
    if problem:
        return Check(name, FAIL, f"{index.name}: {problem}", rebuild)
    collections = {d.get("collection") for d in index.documents.values()}
    missing = [s.name for s in settings.sources if s.name not in collections]
    if is_foreign(index, settings):  # another config's index: syncing it with this config would empty it
        built = index.manifest.get("config")
        return Check(name, FAIL, f"{index.name} holds pages of {', '.join(sorted(collections))}"
                                 f"{f', synced with {built}' if built else ''}; this config's sources "
                                 f"({', '.join(missing) or 'none'}) are not in it",
                     "use the config that built this home (--config or MINERVA_CONFIG) or another --home; "
                     "`minerva ingest` here would stop rather than remove those pages")
    if missing:
        return Check(name, FAIL, f"{index.name}: no page of source(s) {', '.join(missing)}",
                     f"{rebuild} (its report says why a page was skipped)")
    return Check(name, OK, f"{index.name}: model {index.manifest.get('model')}, {len(index.documents)} documents, "
                           f"{len(index.chunks)} chunks, {int(index.units.offsets[-1])} answer-unit vectors")


def _vector_problem(vectors: np.ndarray, rows: int, dim: int, what: str) -> str | None:
    """Why ``vectors`` are not ``rows`` unit vectors of length ``dim``, or None."""
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape != (rows, dim):
        return f"{what} have shape {vectors.shape}, expected ({rows}, {dim})"
    if rows:
        norms = np.linalg.norm(vectors.astype(np.float64), axis=1)
        bad = int(np.sum(~np.isfinite(norms) | (np.abs(norms - 1.0) > 1e-3)))
        if bad:
            return f"{bad} of {rows} {what} are not unit length"
    return None


def _store_check(home: Path, settings=None) -> Check:
    from feedback import MIGRATIONS, StoreUnavailable
    from feedback.db import database_target, is_url, redact
    from feedback.probe import stored_schema_version

    target = database_target(home, settings.database.url if settings is not None else None)
    if is_url(target):  # PostgreSQL (or sqlite:///…): name it with the password hidden
        return _database_check(target, redact(target), len(MIGRATIONS))
    path, current = Path(target), len(MIGRATIONS)
    if not path.exists():
        parent = next((p for p in (home, *home.parents) if p.exists()), home)
        if not os.access(parent, os.W_OK | os.X_OK):
            return Check("store", FAIL, f"{path} does not exist and {parent} is not writable",
                         "make MINERVA_HOME writable for the user that runs Minerva")
        return Check("store", OK, f"{path} not created yet: `minerva serve` creates it (schema {current})")
    if not os.access(path, os.R_OK | os.W_OK):
        return Check("store", FAIL, f"{path} is not readable and writable by this user",
                     "chown/chmod it for the user that runs Minerva")
    try:
        version = stored_schema_version(path)
    except StoreUnavailable as exc:
        return Check("store", FAIL, str(exc),
                     "restore it from a backup, or move it away to start a new one (feedback history is lost)")
    if version > current:
        return Check("store", FAIL, f"{path} has schema version {version}; this Minerva knows up to {current}",
                     "upgrade Minerva (pip install -e . in an updated checkout), or point MINERVA_HOME elsewhere")
    if version < current:
        return Check("store", OK, f"{path}: schema version {version}, migrated to {current} when Minerva next "
                                  "opens it")
    return Check("store", OK, f"{path}: schema version {version} (current)")


def _database_check(target: str, shown: str, current: int) -> Check:
    """The store in a database named by URL (``MINERVA_DATABASE_URL`` or config ``database.url``), read-only."""
    from feedback import StoreUnavailable
    from feedback.probe import stored_schema_version

    try:
        version = stored_schema_version(target)
    except StoreUnavailable as exc:
        return Check("store", FAIL, str(exc), exc.hint)  # the CLI prints the same hint
    if version > current:
        return Check("store", FAIL, f"{shown} has schema version {version}; this Minerva knows up to {current}",
                     "upgrade Minerva on this machine to the version the other replicas run")
    if version == 0:
        return Check("store", OK, f"{shown}: empty, Minerva creates the schema (version {current}) on first use")
    if version < current:
        return Check("store", OK, f"{shown}: schema version {version}, migrated to {current} when Minerva next "
                                  "opens it")
    return Check("store", OK, f"{shown}: schema version {version} (current)")


# --- Slack ----------------------------------------------------------------------------------------


def _token_check(env, timeout: float):
    from bot.slack.check import SlackCredentialError, check_credentials

    try:
        identity = check_credentials(env, timeout=timeout)
    except SlackCredentialError as exc:
        return Check("slack tokens", FAIL, str(exc)), None
    mode = "Socket Mode" if identity.socket_mode else "HTTP mode"
    return Check("slack tokens", OK, f"workspace {identity.team!r} as @{identity.user} ({identity.bot_id}), "
                                     f"{mode}"), identity


def needed_scopes(manifest_list: list[str], settings) -> list[str]:
    """The manifest's scopes this config needs: all but the `CHANNEL_HISTORY_SCOPES` no ``respond: questions``
    channel of ``settings`` calls for (all of them when the config did not load)."""
    from bot.slack.channels import CHANNEL_HISTORY_SCOPES, needed_history_scopes

    if settings is None:
        return manifest_list
    needed = set(needed_history_scopes(settings.channels))
    return [s for s in manifest_list if s not in CHANNEL_HISTORY_SCOPES or s in needed]


def _scope_check(identity, manifest: str | Path | None, settings=None) -> Check:
    if identity is None:
        return Check("slack scopes", SKIP, "not checked: no working bot token")
    if manifest is None:
        return Check("slack scopes", SKIP, "not checked: no manifest given")
    try:
        required = needed_scopes(manifest_scopes(manifest), settings)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        return Check("slack scopes", FAIL, f"cannot read the app manifest {manifest}: {exc}",
                     "pass --manifest PATH (the repository's manifest.yml)")
    if not identity.scopes:
        return Check("slack scopes", SKIP, "Slack did not report the token's scopes (no x-oauth-scopes header); "
                                           f"compare OAuth & Permissions with {Path(manifest).name} by hand")
    missing = [s for s in required if s not in identity.scopes]
    if missing:
        return Check("slack scopes", FAIL, f"the token lacks {', '.join(missing)} (manifest.yml asks for them)",
                     _SCOPE_FIX)
    return Check("slack scopes", OK, f"all {len(required)} bot scopes of {Path(manifest).name} granted")


def manifest_scopes(manifest: str | Path) -> list[str]:
    """The bot scopes a Slack app manifest asks for (``oauth_config.scopes.bot``), in file order.

    Raises:
        OSError: the file cannot be read.
        yaml.YAMLError: it is not YAML.
        ValueError: it has no ``oauth_config.scopes.bot`` list.
    """
    raw = yaml.safe_load(Path(manifest).read_text(encoding="utf-8")) or {}
    scopes = ((raw.get("oauth_config") or {}).get("scopes") or {}).get("bot") if isinstance(raw, dict) else None
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise ValueError("no oauth_config.scopes.bot list")
    return scopes


def _channel_checks(settings, identity, env, timeout: float) -> list[Check]:
    """One check per configured alert/digest channel (routes sharing a channel share its line)."""
    if settings is None:
        return [Check("slack channels", SKIP, "not checked: the config did not load")]
    from config import ConfigError
    from config.alerts import alerts_config_for

    try:
        routing = alerts_config_for(settings).routing
    except ConfigError as exc:
        return [Check("alerts config", FAIL, str(exc), "fix alerts.yaml (beside the config)")]
    routes: dict[str, list[str]] = {}
    for route, channel in (("alerts", routing.alert_channel), ("daily digest", routing.daily_digest_channel),
                           ("weekly digest", routing.weekly_digest_channel)):
        if channel:
            routes.setdefault(channel.strip(), []).append(route)
    if not routes:
        return [Check("slack channels", SKIP, "no alert or digest channel configured: alerts and digests are not "
                                              "posted to Slack",
                      "to get them, set slack.alert_channel and slack.digest_channel (channel ids) in the config")]
    if identity is None:
        return [Check(f"channel {c}", SKIP, "not checked: no working bot token") for c in routes]
    return [_channel_check(channel, used_for, identity, env, timeout) for channel, used_for in routes.items()]


def _web_client(env, timeout: float):
    """A slack_sdk WebClient on ``env``'s bot token and API address (no retries: a check reports, it does not wait)."""
    from slack_sdk import WebClient

    api_url = (env.get("SLACK_API_URL") or "").strip() or WebClient.BASE_URL
    return WebClient(token=env.get("SLACK_BOT_TOKEN", "").strip(), base_url=api_url, timeout=timeout,
                     retry_handlers=[])


def _expert_group_checks(settings, identity, env, timeout: float) -> list[Check]:
    """One check per user group (S…) "Ask an expert" asks (``experts.ask``, a channel's or a source's
    ``experts``): Slack must list its members, or a request would reach no one (a newcomer's docs example id)."""
    if settings is None or identity is None:
        return []
    groups = {expert_target(v) for v in [settings.experts.ask, *(c.experts for c in settings.channels.values()),
                                          *(s.experts for s in settings.sources)]}
    return [_expert_group_check(group, env, timeout) for group in sorted(g for g in groups if g and g.startswith("S"))]


def _expert_group_check(group: str, env, timeout: float) -> Check:
    from slack_sdk.errors import SlackApiError

    name = f"experts {group}"
    try:
        members = _web_client(env, timeout).usergroups_users_list(usergroup=group).get("users") or []
    except SlackApiError as exc:
        error = exc.response.get("error", "unknown_error") if exc.response is not None else "unknown_error"
        return Check(name, FAIL, f"Slack cannot list user group {group}'s members ({error}): \"Ask an expert\" would "
                                 "reach no one", "check the id (People › User groups › the group's ID) and the "
                                                 "usergroups:read scope")
    except Exception as exc:  # noqa: BLE001 - network errors: the API is not reachable
        return Check(name, FAIL, f"cannot reach the Slack Web API ({type(exc).__name__}: {exc})",
                     "check the network, proxy or SLACK_API_URL")
    if not members:
        return Check(name, FAIL, f"user group {group} has no members: \"Ask an expert\" would reach no one",
                     "add people to the group, or ask another group, user or channel")
    return Check(name, OK, f"user group {group}: {len(members)} member(s) to ask")


def _channel_check(channel: str, used_for: list[str], identity, env, timeout: float) -> Check:
    from slack_sdk.errors import SlackApiError

    name, purpose = f"channel {channel}", " and ".join(used_for)
    invite = f"type /invite @{identity.user} in that channel"
    if not _CHANNEL_ID.match(channel):
        return Check(name, FAIL, f"{channel!r} ({purpose}) is not a channel id",
                     "put the channel's id (C…, at the bottom of the channel details' About tab) in the config")
    client = _web_client(env, timeout)
    api_url = client.base_url
    try:
        info = client.conversations_info(channel=channel).get("channel") or {}
    except SlackApiError as exc:
        error = exc.response.get("error", "unknown_error") if exc.response is not None else "unknown_error"
        if error == "channel_not_found":
            return Check(name, FAIL, f"no channel {channel} ({purpose}) that the bot can see",
                         f"check the id; a private channel is visible only once the bot is in it: {invite}")
        if error == "missing_scope":
            return Check(name, FAIL, f"the token may not look channels up ({purpose})",
                         "add channels:read and groups:read (manifest.yml lists them), reinstall the app")
        return Check(name, FAIL, f"Slack answered conversations.info with {error} ({purpose})",
                     "retry; check https://status.slack.com")
    except Exception as exc:  # noqa: BLE001 - network errors: the API is not reachable
        return Check(name, FAIL, f"cannot reach the Slack Web API at {api_url} ({type(exc).__name__}: {exc})",
                     "check the network, proxy or SLACK_API_URL")
    label = f"#{info['name']}" if info.get("name") else channel
    if info.get("is_archived"):
        return Check(name, FAIL, f"{label} ({purpose}) is archived", "unarchive it or configure another channel")
    if not info.get("is_member"):
        return Check(name, FAIL, f"the bot is not a member of {label} ({purpose}): digests with charts fail there",
                     invite)
    return Check(name, OK, f"{label} ({purpose}): exists, the bot is a member")
