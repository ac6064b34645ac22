"""The local stack's moto patches: a write to an item is atomic with every other write to it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from a2a_serverless_dev.moto_fixes import WRITE_LOCK, fast_transactions, partition_queries
from testkit.aws import moto_clients


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(
            lambda c: c.update_item(
                TableName="t",
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET v = :v",
                ConditionExpression="v = :old",
                ExpressionAttributeValues={":v": {"N": "2"}, ":old": {"N": "1"}},
            ),
            id="update_item",
        ),
        pytest.param(lambda c: c.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"N": "2"}}), id="put_item"),
        pytest.param(lambda c: c.delete_item(TableName="t", Key={"pk": {"S": "a"}}), id="delete_item"),
    ],
)
def test_single_item_writes_wait_for_a_transaction_in_progress(write: Any) -> None:
    # moto checks a condition and writes without a lock; the stack's server answers concurrently.
    # A conditional UpdateItem and a transaction on the same version could then both pass their
    # checks, and the later write dropped the earlier one's change (CancelTask's mark, lost to the
    # worker's next event). Every write now takes the lock transactions hold.
    with moto_clients() as (dynamodb, _), fast_transactions():
        dynamodb.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
        done = threading.Event()

        def writer() -> None:
            write(dynamodb)
            done.set()

        with WRITE_LOCK:  # as a transaction between its checks and its writes
            thread = threading.Thread(target=writer, daemon=True)
            thread.start()
            assert not done.wait(0.5), "the write went through while a transaction held the table"
        assert done.wait(10)
        thread.join()


def test_a_query_reads_its_partition_and_answers_as_moto_does() -> None:
    # moto lists and sorts every item of the table for each Query; the local stack reads the
    # queried partition only. Same answers: key conditions, order, limits, paging, and index
    # queries (left to moto) alike.
    def answers(dynamodb: Any) -> list[Any]:
        queries: list[dict[str, Any]] = [
            {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p1"}}},
            {
                "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
                "ExpressionAttributeValues": {":p": {"S": "p2"}, ":a": {"S": "s03"}, ":b": {"S": "s07"}},
                "ScanIndexForward": False,
                "Limit": 2,
            },
            {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "none"}}},
            {
                "IndexName": "ByG",
                "KeyConditionExpression": "g = :g",
                "ExpressionAttributeValues": {":g": {"S": "even"}},
            },
        ]
        out = []
        for query in queries:
            response = dynamodb.query(TableName="t", **query)
            out.append((response["Items"], response.get("LastEvaluatedKey"), response["Count"]))
        return out

    results = []
    for patched in (False, True):
        with moto_clients() as (dynamodb, _):
            dynamodb.create_table(
                TableName="t",
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                GlobalSecondaryIndexes=[
                    {
                        "IndexName": "ByG",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
                BillingMode="PAY_PER_REQUEST",
            )
            for p in ("p1", "p2", "p3"):
                for n in range(10):
                    item = {"pk": {"S": p}, "sk": {"S": f"s{n:02d}"}, "g": {"S": "even" if n % 2 == 0 else "odd"}}
                    dynamodb.put_item(TableName="t", Item=item)
            if patched:
                with partition_queries():
                    results.append(answers(dynamodb))
            else:
                results.append(answers(dynamodb))
    assert results[0] == results[1]
    assert [len(items) for items, _, _ in results[1]] == [10, 2, 0, 15]
