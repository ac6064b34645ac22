"""The DynamoDB adapters: ``TaskStore`` and ``AgentStateStore`` on the single table ``TasksTable``
of ``template.yaml``.

One door: :mod:`.table` holds the table's keys and items and :class:`.table.Table`, the only holder
of the boto3 client, each conditional write one of its named methods, its condition built from
named parts. Around it: :mod:`.store` (the task store: item layout and write rules),
:mod:`.reads` (a task assembled from its snapshot and log), :mod:`.queries` (Query arguments),
:mod:`.delegation` (delegation references) and :mod:`.agent_state` (agents' saved state). The
public name is :mod:`a2a_serverless.adapters`' ``DynamoDBTaskStore``.
"""
