"""Several real ``minerva serve`` replicas on one store; re-exported from the package (`bot.cli.sandbox.replicas`),
where ``minerva sandbox --replicas N`` uses them."""

from bot.cli.sandbox.replicas import (  # noqa: F401
    FEEDBACK_ACTION, MINERVA, SECRET, Cluster, Replica, answer_id_of, free_port, start_replicas, stop_replicas,
)
