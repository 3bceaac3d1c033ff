"""`cluster`: the topics of each user's current memories, rebuilt wholesale and written as a diff.

Wholesale, because HDBSCAN is not incremental and a user's memories are few enough (thousands) to
cluster in a second or two; and because a whole pass sees topics merge, split and fade, which
assigning new memories to old topics would not. What is written is only what changed: a cluster
that continues a stored topic (more than half of the smaller one shared) keeps its id, so the
topic summaries `seal` wrote for it stay valid, and an unchanged clustering writes nothing. The
vectors of the masked texts (`memory.topics.without_people`) go through the embedding cache, so a
nightly run embeds only the memories that are new since the last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mnemoflow.embedding.worker import vectors_by_hash
from mnemoflow.maintenance import JobReport, job, user_scopes
from mnemoflow.memory.topics import continued, find_topics, without_people
from mnemoflow.storage import Scope
from mnemoflow.storage.store import memory_content_hash
from mnemoflow.tree_models import TopicDraft

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService


def topic_drafts(service: MemoryService, scope: Scope) -> list[TopicDraft]:
    """The user's topics as a clustering of their current memories finds them now."""
    store = service.store
    inputs = store.cluster_inputs(scope)
    masked = [without_people(content, people) for _, content, people in inputs]
    hashes = [memory_content_hash(text) for text in masked]
    if len(inputs) < 2 * service.settings.cluster_min_size:
        return []
    by_hash, _ = vectors_by_hash(store, service.embedder, dict(zip(hashes, masked)))
    found = find_topics(masked, np.stack([by_hash[h] for h in hashes]), service.settings.cluster_min_size)
    members = [{inputs[i][0]: strength for i, strength in topic.members.items()} for topic in found]
    stored = {t.id: set(t.memory_ids) for t in store.list_topics(scope)}
    ids = continued([set(m) for m in members], stored)
    return [TopicDraft(topic_id, topic.label, topic.terms, m) for topic_id, topic, m in zip(ids, found, members)]


@job("cluster", schedule="0 2 * * *",
     description="Cluster each user's current memories into topics (HDBSCAN over their vectors, names masked), "
                 "labelled by their most distinctive terms; topics that continue keep their ids.")
def cluster(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    """Runs first at night, so `seal` (02:30) summarises the night's topics."""
    store = service.store
    for scope in user_scopes(service, tenant_id):
        changed = store.write_topics(scope, topic_drafts(service, scope), actor="cluster")
        for what, n in changed.items():
            report.counts[what] = report.counts.get(what, 0) + n
        report.counts["users"] = report.counts.get("users", 0) + 1
