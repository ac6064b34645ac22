"""A2A v0.3 compatibility: pure conversions between the v0.3 wire shapes and the v1.0 models.

The server has one core, v1.0. A v0.3 request is converted at the edge into the v1.0 request's
ProtoJSON dict, runs the same operation as its v1.0 twin, and the v1.0 result is converted back
(A2A specification, section 3.6.2 Server Responsibilities: one agent may serve several versions). Nothing here does
I/O; the transports (``transport/v03.py``) pick the converters.

* :mod:`.json_shapes`: the v0.3 JSON-RPC binding (``kind`` discriminators, ``canceled``,
  ``input-required``..., ``user``/``agent``, ``file.bytes``/``file.uri``).
* :mod:`.rest_shapes`: the v0.3 HTTP+JSON binding, ProtoJSON of the v0.3 proto (``content``,
  ``TASK_STATE_CANCELLED``, ``ROLE_*``, ``{"task"|"message"|"statusUpdate"|"artifactUpdate": ...}``).
* :mod:`.card`: the merged agent card, readable by v1.0 and v0.3 clients alike.

Rules (the full field table is ``docs/v03-compat.md``):

* Input converters accept any JSON and either return a v1.0 wire dict or raise
  ``InvalidParamsError`` whose violations name the *v0.3* path (``message.parts[0].kind``).
* Absent ``blocking`` means blocking, on both bindings; ``historyLength`` 0 means "no limit"
  (v0.3's reading) and becomes unset.
* A push config set without an id gets the task id (v0.3: one default config per task); a get
  without a config id asks for that default.
* Status updates get ``final: true`` in terminal and interrupted states.

Lossless wherever both versions can express a value. What v0.3 cannot hold:

* a non-object DataPart value: sent as ``{"value": v}`` with ``metadata.data_part_compat = true``
  (the reference SDK's convention) and unwrapped on the way in;
* ``mediaType``/``filename`` on text and data parts (v0.3 has them on files only): dropped;
* authentication schemes after the first (v1.0 has one ``scheme``): dropped on the way in;
* ``referenceTaskIds`` over REST (not in the v0.3 proto): dropped; JSON-RPC carries them;
* ``tenant``: v0.3 has none;
* the v0.3 state ``unknown``: refused on input (a v1.0 status must have a state);
* ``metadata`` of v0.3 ``tasks/get`` and push-config params: v1.0 has no field for it.
"""

from . import card, json_shapes, rest_shapes
from .card import merged_card

__all__ = ["card", "json_shapes", "merged_card", "rest_shapes"]
