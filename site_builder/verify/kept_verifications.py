"""How each record's verification is kept in the build cache and read back.

An entry is two lines of JSON, `headed`: its head (source, warnings, the checks that did not
verify and how many there are) and every check. A build reads the head alone (checked by its
own checksum), which is all its checks and report show, and every check only for a page it
renders; if the entry is gone by then, the record is verified again. A build that verified a
record keeps its head alone in memory once the entry is written.

A build with a cache on disk leaves a record the cache has no verification of to the worker
that renders its page (`Deferred`): the worker verifies it, draws the page from it, writes
the entry and sends back its head alone (`verified_here`, `received`). The record is read
once, in one process, and no check travels between processes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from site_builder.cache.reuse import VERIFY
from site_builder.cache.store import BuildCache, headed
from site_builder.model.claims import ClaimCheck, LaterChecks, Verification
from site_builder.runtime.workers import run_each


def kept_or_verified(
    cache: BuildCache,
    keys: Sequence[str],
    tasks: Sequence[Callable[[], Verification]],
    jobs: int,
    *,
    hold: bool = False,
) -> list[Verification]:
    """Return `[task() for task in tasks]`: each read back from the cache when an entry for
    its key is there, the others verified over `jobs` processes and kept; unless `hold`, a
    verification kept on disk keeps only its head in memory. (Each task holds one record:
    the preview keeps a verification, and so its task, from one rebuild to the next.)"""
    found = _kept(cache, keys, tasks)
    missing = [index for index in range(len(keys)) if index not in found]

    def kept(position: int, verification: Verification) -> Verification:
        index = missing[position]
        on_disk = cache.write(VERIFY, keys[index], partial(dump_verification, verification))
        if on_disk and not hold:  # read back where needed: the checks need not stay here
            load = _every_check(cache, keys[index], tasks[index])
            checks = LaterChecks(verification.unsettled, _counted(verification), load)
            verification = Verification(verification.source, checks, verification.warnings)
        cache.hold(VERIFY, keys[index], verification)
        return verification

    verified = run_each(lambda position: tasks[missing[position]](), len(missing), jobs, kept)
    found.update(zip(missing, verified, strict=True))
    return [found[index] for index in range(len(keys))]


@dataclass(frozen=True)
class Deferred:
    """A record's verification left to the worker that renders its page (`verified_here`)."""

    key: str
    """The verification's key in the build cache."""
    task: Callable[[], Verification]
    """What verifies the record."""


def kept_or_deferred(
    cache: BuildCache, keys: Sequence[str], tasks: Sequence[Callable[[], Verification]]
) -> list[Verification | Deferred]:
    """Return each verification the cache has (read back as `kept_or_verified` reads it),
    and for each other record what verifies it where its page is rendered."""
    found = _kept(cache, keys, tasks)
    return [
        found[index] if index in found else Deferred(key, tasks[index])
        for index, key in enumerate(keys)
    ]


def verified_here(
    cache: BuildCache, deferred: Deferred
) -> tuple[Verification, bytes | Verification]:
    """Verify a record where its page is rendered (a worker) and keep the verification in the
    cache; return it, and what goes back to the builder (`received`): the entry's head if
    the entry is on disk now, else the whole verification."""
    verification = deferred.task()
    entry = dump_verification(verification)
    if cache.write(VERIFY, deferred.key, entry):
        return verification, _lines(entry)[1]
    return verification, verification


def received(
    cache: BuildCache, sent: bytes | Verification, deferred: Callable[[str], Deferred]
) -> Verification:
    """Return the verification a worker made (`verified_here`), `deferred(source)` being what
    was left to it for that record: from its head, its checks read back from the entry the
    worker wrote when asked."""
    if isinstance(sent, Verification):
        verification, left = sent, deferred(sent.source)
    else:
        head = json.loads(sent)
        left = deferred(head["source"])
        verification = _from_fields(head, _every_check(cache, left.key, left.task))
    cache.keep(VERIFY, left.key)
    return replace(verification, stored_as=left.key)


def _kept(
    cache: BuildCache, keys: Sequence[str], tasks: Sequence[Callable[[], Verification]]
) -> dict[int, Verification]:
    """Return the verifications the cache has, by index: held in memory (the preview's) or
    their heads read back, their checks read when asked."""
    found: dict[int, Verification] = {}
    for index, key in enumerate(keys):
        held = cache.recall(VERIFY, key)
        if isinstance(held, Verification):
            found[index] = held
            continue
        head = cache.read_head(VERIFY, key)
        if head is not None:
            try:
                found[index] = _from_head(head, _every_check(cache, key, tasks[index]))
            except (ValueError, KeyError, TypeError):  # a damaged entry: verify again
                cache.misses += 1
                continue
            cache.hold(VERIFY, key, found[index])
    return found


def dump_verification(verification: Verification) -> bytes:
    """Return a verification as two lines of JSON, each check a list of its fields in order:
    the head (source, warnings, the checks that did not verify, how many there are), then
    every check; `headed`, so the head can be read alone."""
    head = {
        "source": verification.source,
        "warnings": verification.warnings,
        "unsettled": [list(check) for check in verification.unsettled],
        "counted": _counted(verification),
    }
    checks = [list(check) for check in verification.checks]
    return headed(*(json.dumps(part, ensure_ascii=False).encode() for part in (head, checks)))


def load_verification(data: bytes) -> Verification:
    """Return the whole verification `dump_verification` wrote."""
    return _from_head(_lines(data)[1], partial(_checks, data))


def _from_head(data: bytes, load: Callable[[], tuple[ClaimCheck, ...]]) -> Verification:
    """Return the verification of a head, its checks read by `load` if asked."""
    return _from_fields(json.loads(data), load)


def _from_fields(head: dict[str, Any], load: Callable[[], tuple[ClaimCheck, ...]]) -> Verification:
    """Return the verification of a decoded head, its checks read by `load` if asked."""
    unsettled = tuple(map(ClaimCheck._make, head["unsettled"]))
    checked, inferred = head["counted"]
    warnings = tuple((path, problem) for path, problem in head["warnings"])
    checks = LaterChecks(unsettled, (int(checked), int(inferred)), load)
    return Verification(head["source"], checks, warnings)


def _counted(verification: Verification) -> tuple[int, int]:
    """How many checks a verification has, and how many an inferred formula verified."""
    return len(verification.checks), verification.inferred


def _checks(data: bytes) -> tuple[ClaimCheck, ...]:
    """Return every check of an entry `dump_verification` wrote."""
    return tuple(map(ClaimCheck._make, json.loads(_lines(data)[2])))


def _lines(data: bytes) -> list[bytes]:
    """Return the three lines of an entry: the head's checksum, the head, every check."""
    lines = data.split(b"\n", 2)
    if len(lines) != 3:
        raise ValueError("not a headed entry")
    return lines


def _every_check(
    cache: BuildCache, key: str, verify_again: Callable[[], Verification]
) -> Callable[[], tuple[ClaimCheck, ...]]:
    """Return what reads every check of the entry `key` when first asked, or verifies the
    record again if the entry was removed or damaged since."""

    def load() -> tuple[ClaimCheck, ...]:
        data = cache.read(VERIFY, key)
        if data is not None:
            try:
                return _checks(data)
            except (ValueError, KeyError, TypeError):
                pass
        return tuple(verify_again().checks)

    return load
