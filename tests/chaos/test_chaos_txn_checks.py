"""kactor chaos's transactional checks (kactor/chaos/txn_workload.check_transactions): the read_committed output of
each partition must be exactly the transform of the input below the group's committed offset."""

from __future__ import annotations

from kactor.chaos.txn_workload import ABORTED, COMMITTED, UNKNOWN, check_transactions, transform, untransform

INPUT = {0: ["a0", "a1", "a2", "a3"], 1: ["b0", "b1"]}


def test_output_equal_to_the_committed_input_passes():
    output = {0: [transform("a0", 1), transform("a1", 1), transform("a2", 3)], 1: [transform("b0", 3)]}
    assert check_transactions(INPUT, {0: 3, 1: 1}, output, {1: COMMITTED, 2: ABORTED, 3: COMMITTED}) == []


def test_a_transaction_ended_by_a_new_producer_may_have_committed_or_not():
    committed_view = {0: [transform("a0", 1)], 1: [transform("b0", 2)]}
    assert check_transactions(INPUT, {0: 1, 1: 1}, committed_view, {1: UNKNOWN, 2: COMMITTED}) == []
    assert check_transactions(INPUT, {1: 1}, {0: [], 1: [transform("b0", 2)]}, {1: UNKNOWN, 2: COMMITTED}) == []


def test_a_run_that_committed_nothing_is_a_violation():
    found = check_transactions(INPUT, {}, {0: [], 1: []}, {1: UNKNOWN, 2: ABORTED})
    assert [v.detail for v in found] == [
        "no transaction committed in the whole run (2 begun): the transactional loop made no progress"]


def test_records_of_an_aborted_transaction_visible_are_a_violation():
    output = {0: [transform("a0", 2)], 1: [transform("b0", 3)]}
    found = check_transactions(INPUT, {0: 1, 1: 1}, output, {2: ABORTED, 3: COMMITTED})
    assert [v.kind for v in found] == ["txn"]
    assert "aborted transaction(s) [2] visible" in found[0].detail


def test_output_without_its_offsets_is_not_atomic():
    # the records of transaction 1 are visible but the group's offset did not move with them
    output = {0: [transform("a0", 1), transform("a1", 1)], 1: []}
    found = check_transactions(INPUT, {}, output, {1: COMMITTED})
    assert len(found) == 1
    assert "read_committed holds 2 records for the 0 input records" in found[0].detail


def test_offsets_without_their_output_lose_records():
    output = {0: [transform("a0", 1)], 1: []}
    found = check_transactions(INPUT, {0: 2}, output, {1: COMMITTED})
    assert len(found) == 1
    assert "1 records for the 2 input records" in found[0].detail and "first difference at 1" in found[0].detail


def test_a_record_twice_is_a_violation():
    output = {0: [transform("a0", 1), transform("a0", 2)], 1: []}
    found = check_transactions(INPUT, {0: 2}, output, {1: COMMITTED, 2: COMMITTED})
    assert len(found) == 1 and "first difference at 1: ['a0']" in found[0].detail


def test_a_committed_transaction_missing_entirely_is_a_violation():
    found = check_transactions(INPUT, {0: 1}, {0: [transform("a0", 1)], 1: []}, {1: COMMITTED, 4: COMMITTED})
    assert [v.detail for v in found] == ["transaction(s) [4] committed but none of their records visible"]


def test_an_offset_past_the_input_is_a_violation():
    found = check_transactions(INPUT, {1: 5}, {0: [], 1: []}, {1: COMMITTED})
    assert len(found) == 2 and "committed offset 5 of chaos-txn-in-1, past its 2 records" in found[0].detail


def test_untransform_keeps_an_at_sign_in_the_value():
    assert untransform(transform("x@y", 12)) == ("x@y", 12)
