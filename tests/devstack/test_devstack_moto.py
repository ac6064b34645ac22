"""The local stack's moto patches: a write to an item is atomic with every other write to it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from a2a_devstack import _moto_transactions
from a2a_devstack._moto_transactions import fast_transactions
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

        with _moto_transactions._LOCK:  # as a transaction between its checks and its writes
            thread = threading.Thread(target=writer, daemon=True)
            thread.start()
            assert not done.wait(0.5), "the write went through while a transaction held the table"
        assert done.wait(10)
        thread.join()
