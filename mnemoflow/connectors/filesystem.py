"""The `filesystem` connector: a local directory or any fsspec URL dlt supports, with globs.

dlt lists the files and keeps an incremental cursor on their modification time, so a sync
only hands on files that are new or were touched since the last one; their metadata lands in
`raw_files.files`. The sync then reads each such file once and compares its content hash
with the document already stored, so a touched but unchanged file writes nothing. A full
listing (metadata only) tells which files are gone.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemoflow.models import IngestErrorRecord
from mnemoflow.storage import Scope, Store

CONNECTOR = "filesystem"
DATASET = "raw_files"


def bucket_url_for(location: str) -> str:
    """A local path becomes a file:// URL (as dlt writes file URLs); fsspec URLs pass through."""
    if "://" in location:
        return location.rstrip("/")
    return Path(location).expanduser().resolve().as_uri()


def matches(relative_path: str, globs: list[str]) -> bool:
    """`**/` also matches files at the top level, as it does in dlt's listing."""
    return any(fnmatch.fnmatch(relative_path, g) or (g.startswith("**/") and fnmatch.fnmatch(relative_path, g[3:]))
               for g in globs)


@dataclass
class FileLanding:
    """What a sync must read: files new or touched since the last sync, and problems found listing."""

    changed: list[Any] = field(default_factory=list)  # dlt FileItemDicts: url, name, size, and a reader
    errors: list[IngestErrorRecord] = field(default_factory=list)


def _pipeline_name(scope: Scope, source: str) -> str:
    key = hashlib.sha256(f"{scope.tenant_id}\x1f{scope.user_id}\x1f{source}".encode()).hexdigest()[:16]
    return f"filesystem_{key}"


def land_files(
    store: Store, scope: Scope, source: str, location: str, globs: list[str], *, pipelines_dir: Path,
    max_bytes: int,
) -> FileLanding:
    """Run the dlt pipeline: list, keep only new or touched files, land their metadata."""
    import dlt
    from dlt.sources.filesystem import filesystem

    landing = FileLanding()
    bucket_url = bucket_url_for(location)

    def listed(items: list[Any]) -> Iterator[dict[str, Any]]:
        for item in items:
            size = item.get("size_in_bytes")
            if size is not None and size > max_bytes:
                landing.errors.append(IngestErrorRecord(CONNECTOR, item["file_url"], "too large",
                                                        f"file is {size} bytes, over the {max_bytes}-byte limit"))
            else:
                landing.changed.append(item)
            yield {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "source": source,
                   "file_url": item["file_url"], "relative_path": item["relative_path"],
                   "file_name": item["file_name"], "mime_type": item["mime_type"], "size_in_bytes": size,
                   "modification_date": item["modification_date"]}

    # one listing (and incremental cursor) per glob; dlt keeps one resource per name, so each
    # gets its own transformer, all landing in the same table
    resources = [
        filesystem(bucket_url=bucket_url, file_glob=glob, incremental=dlt.sources.incremental("modification_date"))
        .with_name(f"listing_{n}")
        | dlt.transformer(listed, name=f"files_{n}", table_name="files", write_disposition="merge",
                          primary_key=("tenant_id", "user_id", "source", "file_url"))
        for n, glob in enumerate(globs)
    ]
    with store.landing() as destination:
        pipeline = dlt.pipeline(pipeline_name=_pipeline_name(scope, source), pipelines_dir=str(pipelines_dir),
                                destination=destination, dataset_name=DATASET)
        pipeline.run(resources)
    seen: set[str] = set()  # a file two globs match is read once
    landing.changed = [i for i in landing.changed if not (i["file_url"] in seen or seen.add(i["file_url"]))]
    return landing


def current_files(location: str, globs: list[str]) -> set[str]:
    """Every file URL the source holds now (a listing, nothing read)."""
    from dlt.common.storages.fsspec_filesystem import glob_files

    bucket_url = bucket_url_for(location)
    client = _fsspec(bucket_url)
    return {item["file_url"] for glob in globs for item in glob_files(client, bucket_url, glob)}


def _fsspec(bucket_url: str) -> Any:
    from dlt.common.storages.configuration import FilesystemConfiguration
    from dlt.common.storages.fsspec_filesystem import fsspec_from_config

    client, _ = fsspec_from_config(FilesystemConfiguration(bucket_url))
    return client
