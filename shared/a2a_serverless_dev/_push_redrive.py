"""``a2a-serverless push-redrive``: move push dead letters back onto the delivery queue with
:func:`a2a_serverless.push.redrive.redrive`, then wait (bounded) and tell what became of each one.

Against a loopback ``--endpoint-url`` (the local stack's moto) it signs with the local stack's test
credentials and region, so the line the stack prints at start-up works as printed; it never sends
the user's AWS credentials to a local process.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._command import fail, positive

if TYPE_CHECKING:
    from a2a_serverless.push.delivery import DeliveryItem
    from a2a_serverless.push.redrive import RedriveReport

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the subcommand to ``commands`` (``ArgumentParser.add_subparsers()``); return its parser."""
    redrive: argparse.ArgumentParser = commands.add_parser(
        "push-redrive",
        help="move dead-lettered push deliveries back onto the delivery queue",
        description="Move push deliveries that failed for good (the push dead-letter queue) back onto the "
        "delivery queue, to be delivered again with the config as it is now. Name a deployed stack, or "
        "give both queue URLs (and --endpoint-url for the local stack's moto).",
    )
    redrive.add_argument("--stack", help="a deployed stack: its outputs name the queues")
    redrive.add_argument("--queue-url", help="the push delivery queue (output PushDeliveryQueueUrl)")
    redrive.add_argument("--dead-letter-url", help="the push dead-letter queue (output PushDeadLetterQueueUrl)")
    redrive.add_argument(
        "--endpoint-url",
        type=_endpoint,
        help="an SQS endpoint other than AWS's (the local stack prints it); a loopback one is the local stack's "
        "moto, reached with its test credentials and region, never yours",
    )
    redrive.add_argument("--region", help="AWS region (default: your AWS configuration's)")
    redrive.add_argument("--limit", type=positive, help="move at most this many (default: all)")
    redrive.add_argument(
        "--dry-run", action="store_true", help="count what would move, by reason; move nothing, hide nothing"
    )
    redrive.add_argument(
        "--wait",
        metavar="SECONDS",
        type=positive,
        default=60,
        help="then wait up to this long for the delivery queue to drain, and tell for each delivery moved "
        "whether it was delivered or failed again (default: %(default)s)",
    )
    redrive.add_argument(
        "--no-wait", dest="wait", action="store_const", const=0, help="move them and return; tell nothing more"
    )
    return redrive


def run(args: argparse.Namespace) -> int:
    """Run ``push-redrive`` with the parsed ``args``; the exit code."""
    from botocore.exceptions import BotoCoreError, ClientError

    from a2a_serverless.push.redrive import follow, redrive

    try:
        session = _redrive_session(args.endpoint_url, args.region)  # a profile that does not exist raises
        queue_url, dead_letter_url = args.queue_url, args.dead_letter_url
        if args.stack:
            outputs = _stack_outputs(session, args.stack)
            queue_url = queue_url or outputs.get("PushDeliveryQueueUrl")
            dead_letter_url = dead_letter_url or outputs.get("PushDeadLetterQueueUrl")
        if not queue_url or not dead_letter_url:
            return fail("name a --stack, or give --queue-url and --dead-letter-url", code=2, command="push-redrive")
        sqs = session.client("sqs", endpoint_url=args.endpoint_url)
        report = redrive(sqs, dead_letter_url, queue_url, limit=args.limit, dry_run=args.dry_run)
        _say_moved(report, dry_run=args.dry_run, limit=args.limit)
        if args.dry_run or not args.wait or not report.moved:
            return 0
        sys.stdout.write(f"waiting up to {args.wait} s for the delivery queue to drain (--no-wait to skip)\n")
        sys.stdout.flush()
        outcomes = follow(sqs, dead_letter_url, queue_url, report, seconds=args.wait)
    except (BotoCoreError, ClientError) as exc:
        return fail(str(exc), code=1, command="push-redrive")
    for outcome in outcomes:
        item = outcome.item
        line = f"  {outcome.outcome:<12}  task {item.task_id}  config {item.config_id}  events {_events(item)}"
        errors = "; ".join(
            back.last_error
            if back.from_seq == item.from_seq and back.up_to_seq == item.up_to_seq
            # the item's range in part: a refused event of it, or where its retries gave up
            else f"events {_events(back)}: {back.last_error}"
            for back in outcome.returned
        )
        sys.stdout.write(f"{line}  ({errors})\n" if errors else line + "\n")
    counts = Counter(outcome.outcome.value for outcome in outcomes)
    sys.stdout.write(
        f"delivered {counts['delivered']}, failed again {counts['failed again']} (back on the dead-letter "
        f"queue, not redriven again), still pending {counts['pending']}\n"
    )
    return 0


def _endpoint(value: str) -> str:
    try:
        parts = urlsplit(value)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed IPv6 literal
        usable = False
    if not usable:
        raise argparse.ArgumentTypeError(f"{value!r} is not an http(s) URL")
    return value


def _redrive_session(endpoint_url: str | None, region: str | None) -> Any:
    """A boto3 session; for a loopback endpoint (the local stack's moto), its fake credentials and
    region (:func:`._environment.moto_session`)."""
    import boto3

    from ._hosts import is_loopback

    host = urlsplit(endpoint_url).hostname if endpoint_url else None
    if host is not None and is_loopback(host):
        from ._environment import moto_session

        return moto_session(region)
    return boto3.session.Session(region_name=region)


def _say_moved(report: RedriveReport, *, dry_run: bool, limit: int | None) -> None:
    verb = "would move" if dry_run else "moved"
    sys.stdout.write(f"{verb} {len(report.moved)} dead-lettered deliveries\n")
    for reason, count in sorted(report.reasons.items()):
        sys.stdout.write(f"  {count:6d}  {reason}\n")
    if limit is not None and len(report.moved) == limit:
        sys.stdout.write(f"stopped at --limit {limit}: the rest stay on the dead-letter queue\n")
    elif dry_run and not report.complete:
        # Counted from what could be read: SQS's own count is approximate.
        sys.stdout.write(
            f"not every message could be read now (in flight elsewhere, or behind an earlier one of its FIFO "
            f"group): the dead-letter queue holds about {report.present}, by SQS's approximate count\n"
        )
    if report.unreadable:
        sys.stdout.write(f"left {len(report.unreadable)} unreadable message(s) on the dead-letter queue\n")


def _events(item: DeliveryItem) -> str:
    return f"{item.from_seq or 'after cursor'}..{item.up_to_seq}"


def _stack_outputs(session: Any, stack: str) -> dict[str, str]:
    described = session.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
