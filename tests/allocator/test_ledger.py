"""The ledger: who holds which device, rebuilt from claim statuses."""

from mockapi.controllers.allocator.inventory import parse_pool
from mockapi.controllers.allocator.kinds import ClaimKey
from mockapi.controllers.allocator.ledger import Ledger
from tests.allocator.conftest import device, pool

A, B = ClaimKey("ns", "a"), ClaimKey("ns", "b")


def status(*entries):
    return {"allocations": [dict(zip(("devicePoolName", "deviceName"), e[:2]), **(e[2] if len(e) > 2 else {})) for e in entries]}


def test_an_entry_without_amounts_holds_the_device_exclusively():
    ledger = Ledger()
    ledger.set_claim(A, status(("p", "d0")))
    assert ledger.exclusively_held(("p", "d0")) and ledger.held_count("p") == 1 and ledger.claim_devices(A) == [("p", "d0")]


def test_shares_add_up_and_admin_entries_hold_nothing():
    ledger = Ledger()
    ledger.set_claim(A, status(("p", "d0", {"allocations": [{"name": "memory", "allocation": "1Gi"}]})))
    ledger.set_claim(B, status(("p", "d0", {"allocations": [{"name": "memory", "allocation": "1024Mi"}]}), ("p", "d1", {"adminAccess": True})))
    assert ledger.used(("p", "d0"), "memory") == 2 * 2**30 * 10**9
    assert not ledger.exclusively_held(("p", "d0")) and not ledger.is_held(("p", "d1"))
    assert ledger.held_count("p") == 1


def test_replacing_or_releasing_says_whether_something_was_freed():
    ledger = Ledger()
    assert ledger.set_claim(A, status(("p", "d0"))) is False
    assert ledger.set_claim(A, status(("p", "d0"), ("p", "d1"))) is False
    assert ledger.set_claim(A, status(("p", "d1"))) is True
    assert ledger.release(A) is True and ledger.held_count("p") == 0 and ledger.claims() == []
    assert ledger.release(A) is False


def test_counters_count_each_held_device_once_from_the_pools_current_spec():
    parsed = parse_pool(pool("p", [device("d0", requests={"m": "2"}), device("d1", requests={"m": "3"})], resources=[{"name": "m", "capacity": "10"}]))
    ledger = Ledger()
    shared = {"allocations": [{"name": "x", "allocation": "1"}]}
    ledger.set_claim(A, status(("p", "d0", shared)))
    ledger.set_claim(B, status(("p", "d0", shared), ("p", "d1")))
    assert ledger.counters_used(parsed) == {"m": 5 * 10**9}
    ledger.release(B)
    assert ledger.counters_used(parsed) == {"m": 2 * 10**9}


def test_a_device_stays_held_by_name_when_its_pool_changes_under_it():
    ledger = Ledger()
    ledger.set_claim(A, status(("p", "gone")))
    emptied = parse_pool(pool("p", [device("other")]))
    assert ledger.is_held(("p", "gone")) and ledger.counters_used(emptied) == {}
