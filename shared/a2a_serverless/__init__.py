"""a2a-serverless: an A2A v1.0 agent behind API Gateway, Lambda, DynamoDB and SQS.

The layer map. A module imports only from its own layer and the layers above it in this list
(``tests/test_architecture.py`` checks it, lazy imports included, and that nothing imports in a
circle; ``tests/test_structure.py``, that no circle forms through ``if TYPE_CHECKING:`` imports
either):

1. **Vocabulary**: :mod:`.versions` (the protocol versions), :mod:`.json_types` (the names of
   arbitrary JSON), :mod:`.errors` (one A2A error hierarchy, transport mapping as class data),
   :mod:`.models` (the proto messages, ProtoJSON on the wire), :mod:`.config` (``Settings``, read
   once at cold start), :mod:`.jwt` (JSON Web Token verification, for the authorizer and for
   receivers of push notifications).
2. **Ports**: :mod:`.ports` (``TaskStore``, ``WorkQueue``, ``DeliveryQueue``, ``BlobStore``,
   ``DurableRuns``, ``SigningKey``: the small interfaces the core talks to, and the records they
   carry), :mod:`.aws` (the AWS clients, typed, with one retry policy), :mod:`.telemetry`
   (OpenTelemetry tracing, off by default, and then no OpenTelemetry import).
3. **Rules** (pure): :mod:`.lifecycle` (the fold of events into a task), :mod:`.transitions`
   (the run's state machine as named transitions), :mod:`.mutation` (``mutate``, the one
   optimistic read-modify-write loop that applies them), :mod:`.blobs` (large parts as objects),
   :mod:`.auth` (credentials -> principal), :mod:`.v03` (the v0.3 wire shapes <-> the v1.0 models).
4. **Runtime**: :mod:`.runtime` (what a call needs: settings, store, queue, executor...).
5. **Core**: :mod:`.operations` (one function per A2A method), :mod:`.methods` (the typed method
   table), :mod:`.card` (the agent card and its signatures), :mod:`.execution` (the executor API,
   the worker and its run modes, the run log, the sweeper), :mod:`.push` (dispatch, delivery,
   signing; ``verify`` for receivers), :mod:`.delegation` (executors calling other A2A agents),
   :mod:`.durable` (durable execution mode: each task one durable execution, waits that hold no
   function).
   :mod:`.frameworks` (agent frameworks' streams bridged to tasks; each adapter imports its
   framework inside its own module) sits just under the core it builds on.
6. **Adapters**: :mod:`.adapters` (DynamoDB, SQS, S3, Lambda durable functions, KMS, in-memory).
7. **Wiring**: :mod:`.wiring` (the runtime built from settings, adapters chosen; the only place
   that picks them).
8. **Edges**: :mod:`.transport` (the Starlette app: the binding rows, ``invoke``, JSON-RPC, REST,
   SSE), :mod:`.lambda_` (Lambda adapters: mangum, Powertools), :mod:`.functions` (one entry
   point per Lambda function, each naming its row).

This package is the runtime: what Lambda runs, and what the core layer ships as it is. The developer
kit is a package of its own, :mod:`a2a_serverless_dev` (the local stack on moto, its fixes of moto,
the console, ``init``, the local durable runner, the ``a2a-serverless`` command): it imports this
package, and no module here imports it (``tests/test_architecture.py`` checks that too).

A request, end to end: ``functions/send_message.py`` names ``methods.SEND_MESSAGE``; the
transport finds its binding row (``transport/rows.py``, v0.3 rows in ``transport/v03.py``) and
:func:`.transport.rows.invoke` runs it: version, caller, request message, call context, then
``operations.send_message`` against the runtime's ``TaskStore`` and ``WorkQueue``.
"""
